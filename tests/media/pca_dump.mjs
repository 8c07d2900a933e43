// media/pca_dump.mjs — the Projector's PCA of a matrix, printed as JSON for
// tests/media/pca_check.py:  node pca_dump.mjs MATRIX.f32 N D
// MATRIX.f32: N * D little-endian float32, row-major. Prints {ratio,
// variance, components (10 of them), projection (the first 5 points)}.
import { readFileSync } from 'node:fs';
import { principalComponents, project } from '../../static/projector/pca.js';

const [file, n, d] = [process.argv[2], +process.argv[3], +process.argv[4]];
const buf = readFileSync(file);
const x = new Float32Array(buf.buffer, buf.byteOffset, n * d);
const pc = principalComponents(x, n, d, 10);
const p = project(x, n, d, pc, 3);
console.log(JSON.stringify({ ratio: pc.ratio, variance: pc.variance, components: pc.components.map((c) => Array.from(c)),
  projection: Array.from(p.subarray(0, 15)) }));
