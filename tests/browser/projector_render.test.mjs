// projector_render.test.mjs — the Projector's two renderers draw one
// picture: the page in chromium with WebGL from SwiftShader picks the CPU
// renderer (static/projector/splat.js) by itself, and ?renderer=webgl forces
// the three.js one; both open the same synthetic embedding
// (tests/browser/write_embedding: 3,000 points in 6 clusters) and their
// frames, read back pixel by pixel, must cover the same pixels (over 97 %
// of the pixels either covers are covered by both: GL's and the splatter's
// rounding may differ at a disc's rim; 99.5 % when written, 80 % with the
// discs 1.4 times too wide) in the same colours (mean difference under 2 of
// 255 where both cover), in the 3D view, the 2D view and with a search
// dimming the other points (blending); in a narrow window every point
// stays in the view. Screenshots:
// <build>/tests/artifacts/projector_render_{cpu,webgl,narrow}.png.

import path from 'node:path';
import fs from 'node:fs';
import { ARTIFACTS, BUILD, check, finishSuite, launchBrowser, requireBrowser, run, startServer, tempDir, until, watchedPage } from './lib.mjs';

requireBrowser('projector_render');
const work = tempDir('gb-projector-render-');
const db = path.join(work, 'points.db');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const started = Date.now();
run(path.join(BUILD, 'tests/write_embedding'), [db, '3000', '32', '6'], 120000);

const server = await startServer(db);
const browser = await launchBrowser(path.join(work, 'profile'), { webgl: true });
const { page: cpuPage, errors } = await watchedPage(browser);
const glPage = await browser.newPage();
await glPage.setViewportSize({ width: 1400, height: 900 });
glPage.on('pageerror', (e) => errors.push(`page error (webgl): ${e.message}`));

const settled = (page) => until(page, () => document.querySelector('.projector-page')?.dataset.projection === 'pca' &&
  !window.__projector.projector.animating, null, 60000);

async function open(page, query) {
  await page.goto(new URL(query, server.url).href);
  await until(page, () => window.__glassbox?.ready, null, 15000);
  await page.click('a[data-tab="projector"]');
  return settled(page);
}

// The frame's pixels: base64 of RGBA bytes, top row first.
const frame = (page) => page.evaluate(() => {
  const { width, height, data } = window.__projector.projector.pixels();
  let s = '';
  for (let i = 0; i < data.length; i += 0x8000) s += String.fromCharCode.apply(null, data.subarray(i, i + 0x8000));
  return { width, height, b64: btoa(s) };
});

// How alike two frames are: of the pixels either covers (not white), the
// share both cover, and the mean colour difference where both do.
async function compare(what) {
  const [a, b] = await Promise.all([frame(cpuPage), frame(glPage)]);
  const pa = Buffer.from(a.b64, 'base64'), pb = Buffer.from(b.b64, 'base64');
  const covered = (p, i) => p[i] < 250 || p[i + 1] < 250 || p[i + 2] < 250;
  let either = 0, both = 0, diff = 0;
  for (let i = 0; i < pa.length; i += 4) {
    const ca = covered(pa, i), cb = covered(pb, i);
    if (ca || cb) either++;
    if (ca && cb) {
      both++;
      diff += (Math.abs(pa[i] - pb[i]) + Math.abs(pa[i + 1] - pb[i + 1]) + Math.abs(pa[i + 2] - pb[i + 2])) / 3;
    }
  }
  const share = both / Math.max(1, either), mean = diff / Math.max(1, both);
  console.log(`# ${what}: ${either} pixels covered, ${(100 * share).toFixed(1)} % by both, mean colour difference ${mean.toFixed(2)}`);
  check(`${what}: the CPU and WebGL frames cover the same pixels in the same colours`,
    a.width === b.width && a.height === b.height && either > 5000 && share > 0.97 && mean < 2,
    `${a.width}x${a.height} vs ${b.width}x${b.height}, ${either} covered, ${(100 * share).toFixed(1)} % by both, mean difference ${mean.toFixed(2)}`);
}

// A narrow window (1024 px) makes the view taller than wide: every point
// stays inside it, in 2D and in 3D. The cloud used to keep the height's
// scale and run past both sides.
async function narrowWindow() {
  await cpuPage.setViewportSize({ width: 1024, height: 900 });
  const outside = () => cpuPage.evaluate(() => {
    const { projector } = window.__projector;
    const r = document.querySelector('.projector-view canvas').getBoundingClientRect();
    let n = 0;
    for (let i = 0; i < 3000; i++) {
      const p = projector.screenOf(i);
      if (!(p.x >= r.left && p.x <= r.right && p.y >= r.top && p.y <= r.bottom)) n++;
    }
    return { n, w: r.width, h: r.height };
  });
  await until(cpuPage, () => {
    const c = document.querySelector('.projector-view canvas');
    return c.clientWidth < c.clientHeight;
  }, null, 15000);
  const flat = await outside();
  check('narrow: every point inside the taller-than-wide 2D view', flat.n === 0 && flat.w < flat.h, JSON.stringify(flat));
  await cpuPage.click('#projector-3d');
  await settled(cpuPage);
  const deep = await outside();
  check('narrow: every point inside the 3D view', deep.n === 0, JSON.stringify(deep));
  await cpuPage.screenshot({ path: path.join(ARTIFACTS, 'projector_render_narrow.png') });
}

async function main() {
  check('CPU page: loads with PCA', await open(cpuPage, '') === true);
  check('WebGL page: loads with PCA', await open(glPage, '?renderer=webgl') === true);
  const renderers = await Promise.all([cpuPage, glPage].map((p) => p.$eval('.projector-view', (v) => v.dataset.renderer)));
  check('renderers: the page picks the CPU one where WebGL is SwiftShader; ?renderer=webgl forces WebGL',
    renderers[0] === 'cpu' && renderers[1] === 'webgl', renderers.join(','));

  await compare('3D view');
  for (const p of [cpuPage, glPage]) {
    await p.click('#projector-3d');
    await settled(p);
  }
  await compare('2D view');
  for (const p of [cpuPage, glPage]) {
    await p.click('#projector-search');
    await p.keyboard.type('cluster 2');
    await until(p, () => document.querySelector('.projector-page').dataset.selected === '500', null, 15000);
  }
  await compare('search (others dimmed, blended)');
  await cpuPage.screenshot({ path: path.join(ARTIFACTS, 'projector_render_cpu.png') });
  await glPage.screenshot({ path: path.join(ARTIFACTS, 'projector_render_webgl.png') });
  await narrowWindow();
  check('no console errors, page errors or failed requests', errors.length === 0, errors.join('\n'));
}

await finishSuite('projector_render', main, { browser, server, work, started });
