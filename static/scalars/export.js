// export.js — a Scalars card's CSV and JSON downloads: every point of every
// drawn run, fetched raw (up to 10,000 per run), not the downsampled rows.

import { getJSON, pooled } from '../core/api.js';
import { download, safeFileName } from '../core/dom.js';

const MAX_POINTS = 10000;

export async function exportScalars(tag, runs, format) {
  const all = await pooled(runs.map((run) => async () => [run,
    await getJSON('scalars/series', { run, tag, points: MAX_POINTS })]), 4);
  const base = safeFileName(`scalars_${tag}`);
  if (format === 'json') download(`${base}.json`, toJSON(tag, all), 'application/json');
  else download(`${base}.csv`, toCSV(all), 'text/csv');
}

function toJSON(tag, all) {
  const runs = Object.fromEntries(all.map(([run, r]) => [run, {
    downsampled: r.downsampled, step: r.step, wall_time: r.wall, value: r.value }]));
  return JSON.stringify({ tag, runs }, null, 1);
}

function toCSV(all) {
  const q = (s) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = ['run,step,wall_time,value'];
  for (const [run, r] of all) for (let i = 0; i < r.step.length; i++) lines.push(`${q(run)},${r.step[i]},${r.wall[i]},${r.value[i]}`);
  return `${lines.join('\n')}\n`;
}
