// view.js — the Projector's points drawn with WebGL (three.js): one Points
// object of n vertices, a 3D view (perspective camera, orbit and zoom) or
// a 2D one (orthographic, pan and zoom), per-point colour, opacity (dimmed
// by a search, hidden by isolation), emphasis (the selected point and its
// neighbours) and, when the embedding has one, each point drawn as its
// sprite image from one atlas texture.
//
// Positions are fitted into [-1, 1] once per projection and moved between
// projections or steps by interpolation over a few frames, so a person sees
// points travel. Frames are drawn on demand (a change, a drag), never in a
// loop: one draw call over buffers uploaded when points change, the camera
// a uniform. Hover and click pick the nearest drawn point on screen, by
// projecting every point with the camera's matrix: O(n) per move, about a
// millisecond for 50,000 points, with no GPU read-back.
//
// Where WebGL runs on the CPU (SwiftShader, llvmpipe) or is missing, the
// points are drawn by splat.js instead, five to seven times faster there;
// `renderer: 'webgl' | 'cpu'` (the page's ?renderer=) chooses by hand.

import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { createSplat } from './splat.js';

// Whether this browser's WebGL is a CPU rasterizer, or absent.
function softwareWebGL() {
  const gl = document.createElement('canvas').getContext('webgl');
  if (!gl) return true;
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  gl.getExtension('WEBGL_lose_context')?.loseContext();
  return /swiftshader|llvmpipe|softpipe|software/i.test(name);
}

const VERTEX = `
attribute vec3 aColor;
attribute float aAlpha;
attribute float aEmph;
attribute float aTile;
uniform float uSize;
uniform float uScale;
uniform float uPersp;
uniform float uSprites;
varying vec3 vColor;
varying float vAlpha;
varying float vTile;
varying float vEmph;
void main() {
  vec4 mv = modelViewMatrix * vec4(position, 1.0);
  gl_Position = projectionMatrix * mv;
  float s = uSize * (aEmph > 0.5 ? 2.2 : 1.0) * (uSprites > 0.5 ? 2.5 : 1.0);
  gl_PointSize = uPersp > 0.5 ? s * uScale / -mv.z : s * uScale;
  if (aAlpha <= 0.0) gl_PointSize = 0.0;
  vColor = aColor; vAlpha = aAlpha; vTile = aTile; vEmph = aEmph;
}`;

const FRAGMENT = `
uniform sampler2D uAtlas;
uniform float uSprites;
uniform vec2 uGrid;
varying vec3 vColor;
varying float vAlpha;
varying float vTile;
varying float vEmph;
void main() {
  vec2 c = gl_PointCoord - 0.5;
  if (uSprites > 0.5) {
    // The image as a silhouette in the point's colour: its dark background
    // is left out, so sprites that overlap do not hide each other.
    vec2 cell = vec2(mod(vTile, uGrid.x), floor(vTile / uGrid.x));
    vec3 t = texture2D(uAtlas, (cell + gl_PointCoord) / uGrid).rgb;
    float lum = max(t.r, max(t.g, t.b));
    bool edge = vEmph > 0.5 && max(abs(c.x), abs(c.y)) > 0.44;
    if (lum < 0.1 && !edge) discard;
    gl_FragColor = vec4(edge ? vec3(0.1) : vColor * (0.35 + 0.65 * lum), vAlpha);
  } else {
    float r2 = dot(c, c);
    if (r2 > 0.25) discard;
    vec3 col = vEmph > 0.5 && r2 > 0.14 ? vec3(0.1) : vColor;
    gl_FragColor = vec4(col, vAlpha);
  }
}`;

export function createView(host, { onHover = () => {}, onPick = () => {}, renderer: which = null } = {}) {
  const canvas = document.createElement('canvas');
  canvas.className = 'projector-canvas';
  host.append(canvas);
  const cpu = which === 'cpu' || (which !== 'webgl' && softwareWebGL());
  const pixelRatio = Math.min(2, window.devicePixelRatio || 1);
  const splat = cpu ? createSplat(canvas) : null;
  const renderer = cpu ? null : new THREE.WebGLRenderer({ canvas, antialias: false });
  renderer?.setPixelRatio(pixelRatio);
  renderer?.setClearColor(0xffffff, 1);
  host.dataset.renderer = cpu ? 'cpu' : 'webgl';
  const scene = new THREE.Scene();
  const persp = new THREE.PerspectiveCamera(45, 1, 0.01, 100);
  const ortho = new THREE.OrthographicCamera(-1, 1, 1, -1, -100, 100);
  let camera = persp, controls = null, mode = '3d';
  const geometry = new THREE.BufferGeometry();
  const material = new THREE.ShaderMaterial({
    vertexShader: VERTEX, fragmentShader: FRAGMENT, transparent: true, depthWrite: false,
    uniforms: { uSize: { value: 4 }, uScale: { value: 1 }, uPersp: { value: 1 }, uSprites: { value: 0 },
      uAtlas: { value: null }, uGrid: { value: new THREE.Vector2(1, 1) } },
  });
  const points = new THREE.Points(geometry, material);
  points.frustumCulled = false;
  scene.add(points);

  const state = { n: 0, pos: new Float32Array(0), from: null, to: null, anim: 0, animStart: 0, dirty: false,
    raf: 0, placed: false, firstPaintMs: null, lastFrameMs: null, frames: 0, sprites: false, hasSprites: false, atlas: null };

  function attribute(name, array, size) {
    const a = new THREE.BufferAttribute(array, size);
    a.setUsage(THREE.DynamicDrawUsage);
    geometry.setAttribute(name, a);
    return a;
  }

  function resize() {
    const w = Math.max(50, host.clientWidth), h = Math.max(50, host.clientHeight);
    if (cpu) splat.setSize(Math.round(w * pixelRatio), Math.round(h * pixelRatio));
    else renderer.setSize(w, h, false);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
    // The points fill the canvas's shorter side: on a portrait canvas (a
    // narrow window) its width, where the fixed height let both sides of
    // the cloud run past the edges.
    const a = w / h, fit = Math.max(1, 1 / a);
    persp.aspect = a;
    persp.fov = (360 / Math.PI) * Math.atan(Math.tan(Math.PI / 8) * fit);
    persp.updateProjectionMatrix();
    ortho.left = -1.15 * a * fit; ortho.right = 1.15 * a * fit; ortho.top = 1.15 * fit; ortho.bottom = -1.15 * fit;
    ortho.updateProjectionMatrix();
    invalidate();
  }
  const observer = new ResizeObserver(resize);
  observer.observe(host);

  function makeControls() {
    controls?.dispose();
    controls = new OrbitControls(camera, canvas);
    controls.enableDamping = false;
    controls.zoomSpeed = 1.2;
    if (mode === '2d') {
      controls.enableRotate = false;
      controls.screenSpacePanning = true;
      controls.mouseButtons = { LEFT: THREE.MOUSE.PAN, MIDDLE: THREE.MOUSE.DOLLY, RIGHT: THREE.MOUSE.PAN };
    }
    controls.addEventListener('change', invalidate);
  }

  function setMode(m) {
    mode = m;
    camera = m === '3d' ? persp : ortho;
    resetCamera();
  }

  function resetCamera() {
    if (mode === '3d') {
      persp.position.set(1.6, 1.2, 2.4);
      persp.up.set(0, 1, 0);
    } else {
      ortho.position.set(0, 0, 5);
      ortho.zoom = 1;
      ortho.updateProjectionMatrix();
    }
    camera.lookAt(0, 0, 0);
    material.uniforms.uPersp.value = mode === '3d' ? 1 : 0;
    makeControls();
    invalidate();
  }

  // ---- data --------------------------------------------------------------------------
  function setCount(n) {
    state.n = n;
    state.pos = new Float32Array(n * 3);
    attribute('position', state.pos, 3);
    attribute('aColor', new Float32Array(n * 3).fill(0.3), 3);
    attribute('aAlpha', new Float32Array(n).fill(1), 1);
    attribute('aEmph', new Float32Array(n), 1);
    const tiles = new Float32Array(n);
    for (let i = 0; i < n; i++) tiles[i] = i;
    attribute('aTile', tiles, 1);
    invalidate();
  }

  // Fits positions (n*3) into [-1, 1] around their centre; 2D projections
  // keep z = 0.
  function fitted(p) {
    const n = p.length / 3, lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) {
      const v = p[3 * i + k];
      if (v < lo[k]) lo[k] = v;
      if (v > hi[k]) hi[k] = v;
    }
    const mid = lo.map((l, k) => (l + hi[k]) / 2);
    const half = Math.max(...lo.map((l, k) => (hi[k] - l) / 2), 1e-12);
    const out = new Float32Array(p.length);
    for (let i = 0; i < p.length; i++) out[i] = (p[i] - mid[i % 3]) / half;
    return out;
  }

  // New positions, moved to over `ms` (0: at once).
  function setPositions(p, ms = 450) {
    if (p.length !== state.n * 3) setCount(p.length / 3);
    const to = fitted(p);
    if (!ms || !state.placed) {
      state.placed = true;
      state.pos.set(to);
      state.anim = 0;
      geometry.attributes.position.needsUpdate = true;
      invalidate();
      return;
    }
    state.from = state.pos.slice();
    state.to = to;
    state.anim = ms;
    state.animStart = performance.now();
    invalidate();
  }

  function setColors(rgb) {   // Float32Array n*3 in [0, 1]
    geometry.attributes.aColor.array.set(rgb);
    geometry.attributes.aColor.needsUpdate = true;
    invalidate();
  }

  function setAlpha(alpha) {   // Float32Array n: 1 shown, < 1 dimmed, 0 hidden
    geometry.attributes.aAlpha.array.set(alpha);
    geometry.attributes.aAlpha.needsUpdate = true;
    invalidate();
  }

  function setEmphasis(indices) {
    const e = geometry.attributes.aEmph.array;
    e.fill(0);
    for (const i of indices) e[i] = 1;
    geometry.attributes.aEmph.needsUpdate = true;
    invalidate();
  }

  function setPointSize(px) {
    material.uniforms.uSize.value = px;
    invalidate();
  }

  // atlas: an image of cols x rows tiles, point i in tile i (row-major).
  function setSprites(atlas, cols, rows) {
    state.hasSprites = true;
    if (cpu) {
      state.atlas = { texels: splat.texels(atlas), width: atlas.width, cols, rows };
      invalidate();
      return;
    }
    const tex = new THREE.Texture(atlas);
    tex.flipY = false;
    tex.minFilter = THREE.LinearFilter;
    tex.generateMipmaps = false;
    tex.needsUpdate = true;
    material.uniforms.uAtlas.value?.dispose();
    material.uniforms.uAtlas.value = tex;
    material.uniforms.uGrid.value.set(cols, rows);
    invalidate();
  }

  function showSprites(on) {
    state.sprites = on && state.hasSprites;
    material.uniforms.uSprites.value = state.sprites ? 1 : 0;
    material.depthWrite = state.sprites;
    material.transparent = !state.sprites;
    material.needsUpdate = true;
    invalidate();
  }

  // ---- frames ------------------------------------------------------------------------
  function invalidate() {
    if (!state.raf) state.raf = requestAnimationFrame(frame);
  }

  function frame() {
    state.raf = 0;
    if (state.anim) {
      const t = Math.min(1, (performance.now() - state.animStart) / state.anim);
      const e = t * t * (3 - 2 * t);
      const { from, to, pos } = state;
      for (let i = 0; i < pos.length; i++) pos[i] = from[i] + (to[i] - from[i]) * e;
      geometry.attributes.position.needsUpdate = true;
      if (t >= 1) state.anim = 0;
      else invalidate();
    }
    draw();
  }

  function draw() {
    const t0 = performance.now();
    const h = canvas.height || 1;
    // point size in device pixels; 3D divides by depth, 2D follows the zoom.
    // Many points get smaller ones (a 4th root: 5,000 and fewer keep the
    // full size, 50,000 get 0.56 of it), or a dense cloud is one blot.
    const density = Math.min(1, (5000 / Math.max(1, state.n)) ** 0.25);
    material.uniforms.uScale.value = density * (mode === '3d' ? (h / 600) * 2.5 : (h / 600) * Math.sqrt(ortho.zoom));
    if (cpu) drawSplat();
    else renderer.render(scene, camera);
    state.lastFrameMs = performance.now() - t0;
    state.frames++;
    // the first frame of projected points (not the count's, all at the origin)
    if (state.firstPaintMs === null && state.placed) state.firstPaintMs = performance.now();
    host.dataset.frames = String(state.frames);
  }

  // The camera's matrix from the points' space to clip space (the points'
  // object sits at the origin, unscaled): its elements, column-major.
  const m = new THREE.Matrix4();
  function clipMatrix() {
    camera.updateMatrixWorld();
    return m.multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).elements;
  }

  const frameArgs = { m: null, n: 0, pos: null, rgb: null, alpha: null, emph: null, size: 0, scale: 0, persp: false, atlas: null };
  function drawSplat() {   // fills the one arguments object: nothing allocated per frame
    const a = geometry.attributes, u = material.uniforms, f = frameArgs;
    f.m = clipMatrix();
    f.n = a.aColor ? state.n : 0;   // before the first setCount there are no attributes: an empty frame
    f.pos = state.pos;
    f.rgb = a.aColor?.array;
    f.alpha = a.aAlpha?.array;
    f.emph = a.aEmph?.array;
    f.size = u.uSize.value;
    f.scale = u.uScale.value;
    f.persp = mode === '3d';
    f.atlas = state.sprites ? state.atlas : null;
    splat.draw(frameArgs);
  }

  // ---- picking -------------------------------------------------------------------------
  function pick(clientX, clientY, radius = 10) {
    const r = canvas.getBoundingClientRect();
    const x = clientX - r.left, y = clientY - r.top;
    const e = clipMatrix(), pos = state.pos, alpha = geometry.attributes.aAlpha.array;
    let best = -1, bestD = radius * radius, bestDepth = Infinity;
    for (let i = 0; i < state.n; i++) {
      if (alpha[i] <= 0) continue;
      const px = pos[3 * i], py = pos[3 * i + 1], pz = pos[3 * i + 2];
      const w = e[3] * px + e[7] * py + e[11] * pz + e[15];
      if (w <= 0) continue;
      const sx = ((e[0] * px + e[4] * py + e[8] * pz + e[12]) / w * 0.5 + 0.5) * r.width;
      const sy = (0.5 - (e[1] * px + e[5] * py + e[9] * pz + e[13]) / w * 0.5) * r.height;
      const d2 = (sx - x) ** 2 + (sy - y) ** 2;
      if (d2 < bestD || (d2 === bestD && w < bestDepth)) { best = i; bestD = d2; bestDepth = w; }
    }
    return best;
  }

  // Where point i is on the page (for tests and labels).
  function screenOf(i) {
    const r = canvas.getBoundingClientRect();
    const v = new THREE.Vector3(state.pos[3 * i], state.pos[3 * i + 1], state.pos[3 * i + 2]).project(camera);
    return { x: r.left + (v.x * 0.5 + 0.5) * r.width, y: r.top + (0.5 - v.y * 0.5) * r.height };
  }

  let hoverRaf = 0, lastMove = null, downAt = null;
  canvas.addEventListener('pointermove', (ev) => {
    lastMove = ev;
    if (!hoverRaf) hoverRaf = requestAnimationFrame(() => {
      hoverRaf = 0;
      onHover(pick(lastMove.clientX, lastMove.clientY), lastMove);
    });
  });
  canvas.addEventListener('pointerleave', () => onHover(-1, null));
  canvas.addEventListener('pointerdown', (ev) => { downAt = [ev.clientX, ev.clientY]; });
  canvas.addEventListener('pointerup', (ev) => {
    // a click, not the end of a drag
    if (downAt && Math.hypot(ev.clientX - downAt[0], ev.clientY - downAt[1]) < 4) onPick(pick(ev.clientX, ev.clientY), ev);
    downAt = null;
  });

  // ---- measuring -------------------------------------------------------------------------
  // Rotates the 3D view by `frames` steps, drawing and finishing each
  // (a one-pixel read waits for the GPU): the median frame in ms.
  function benchRotate(frames = 60) {
    const gl = renderer?.getContext(), px = new Uint8Array(4), times = [];
    for (let f = 0; f < frames; f++) {
      const t0 = performance.now();
      const a = (2 * Math.PI * f) / frames;
      camera.position.set(2.9 * Math.sin(a), 1.2, 2.9 * Math.cos(a));
      camera.lookAt(0, 0, 0);
      draw();
      if (cpu) splat.finish();
      else gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return times[times.length >> 1];
  }

  // The frame drawn now, read back: { width, height, data: RGBA bytes,
  // top row first } (for the tests that compare the two renderers).
  function pixels() {
    draw();
    const w = canvas.width, h = canvas.height;
    if (cpu) return { width: w, height: h, data: canvas.getContext('2d').getImageData(0, 0, w, h).data };
    const gl = renderer.getContext(), flipped = new Uint8Array(w * h * 4), data = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, flipped);
    for (let y = 0; y < h; y++) data.set(flipped.subarray((h - 1 - y) * w * 4, (h - y) * w * 4), y * w * 4);
    return { width: w, height: h, data };
  }

  setMode('3d');
  resize();
  return {
    canvas, setCount, setPositions, setColors, setAlpha, setEmphasis, setPointSize, setSprites, showSprites,
    setMode, resetCamera, pick, screenOf, benchRotate, pixels, invalidate,
    get mode() { return mode; },
    get stats() { return { firstPaintMs: state.firstPaintMs, lastFrameMs: state.lastFrameMs, frames: state.frames }; },
    get animating() { return state.anim > 0; },
    destroy() {
      observer.disconnect();
      controls?.dispose();
      if (state.raf) cancelAnimationFrame(state.raf);
      geometry.dispose();
      material.uniforms.uAtlas.value?.dispose();
      material.dispose();
      renderer?.dispose();
    },
  };
}
