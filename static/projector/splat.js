// splat.js — the Projector's points drawn on the CPU into a 2D canvas, for
// browsers whose WebGL is itself a CPU rasterizer (SwiftShader, llvmpipe:
// machines without a GPU, headless chromium) or that have no WebGL at all.
//
// Such a rasterizer sets up every point as a primitive of its own: about
// 0.45 µs each on this project's 2-core machines, 22 ms for 50,000 points
// before one pixel is filled, 35-45 ms with the pixels. A point needs only
// its projection and a few pixels written, which this loop does in a few
// milliseconds. It draws what view.js's shaders draw — a disc (or the
// sprite's silhouette) of the same size in device pixels, the same colour,
// opacity and emphasis ring, points in index order blended over those
// before, sprites depth-tested — so the two renderers show one picture.
// With a GPU, WebGL is the faster and view.js uses it.

// Pixels are RGBA bytes read as little-endian int32s: signed, so a colour
// stays a small integer to the engine and not a boxed double.
function pack(r, g, b) {
  return 0xff000000 | (Math.round(b) << 16) | (Math.round(g) << 8) | Math.round(r);
}
const WHITE = pack(255, 255, 255);
const DARK = 0.1 * 255;   // the emphasis ring's grey, as the shader's vec3(0.1)
const RING = pack(DARK, DARK, DARK);

export function createSplat(canvas) {
  const ctx = canvas.getContext('2d', { alpha: false });
  let W = 0, H = 0, image = null, pixels = null, depth = null;

  function setSize(w, h) {
    canvas.width = W = w;
    canvas.height = H = h;
    image = ctx.createImageData(w, h);
    pixels = new Int32Array(image.data.buffer);
    depth = null;
  }

  // One frame. f: { m: the clip matrix's 16 elements (column-major),
  // n, pos (n*3), rgb (n*3 in [0, 1]), alpha (n), emph (n), size (px),
  // scale, persp (sizes divided by depth), atlas: { texels (Uint32Array,
  // RGBA bytes), width, cols, rows } or null }.
  function draw(f) {
    const { m: e, n, pos, rgb, alpha, emph, atlas } = f;
    pixels.fill(WHITE);
    if (atlas && !depth) depth = new Float32Array(W * H);
    if (atlas) depth.fill(Infinity);
    const tileW = atlas ? atlas.width / atlas.cols : 0;
    const tileH = atlas ? atlas.texels.length / atlas.width / atlas.rows : 0;
    for (let i = 0; i < n; i++) {
      const a = alpha[i];
      if (a <= 0) continue;
      const x = pos[3 * i], y = pos[3 * i + 1], z = pos[3 * i + 2];
      const w = e[3] * x + e[7] * y + e[11] * z + e[15];
      if (w <= 0) continue;
      const cz = (e[2] * x + e[6] * y + e[10] * z + e[14]) / w;
      if (cz < -1 || cz > 1) continue;   // outside the near and far planes
      const sx = ((e[0] * x + e[4] * y + e[8] * z + e[12]) / w * 0.5 + 0.5) * W;
      const sy = (0.5 - (e[1] * x + e[5] * y + e[9] * z + e[13]) / w * 0.5) * H;
      const em = emph[i] > 0.5;
      const s = Math.max(1, f.size * (em ? 2.2 : 1) * (atlas ? 2.5 : 1) * (f.persp ? f.scale / w : f.scale));
      const left = sx - s / 2, top = sy - s / 2;
      // the pixels whose centres fall in the point's square, as GL rasterizes a point
      const x0 = Math.max(0, Math.ceil(left - 0.5)), x1 = Math.min(W - 1, Math.ceil(left + s - 0.5) - 1);
      const y0 = Math.max(0, Math.ceil(top - 0.5)), y1 = Math.min(H - 1, Math.ceil(top + s - 0.5) - 1);
      if (x0 > x1 || y0 > y1) continue;
      const r = rgb[3 * i] * 255, g = rgb[3 * i + 1] * 255, b = rgb[3 * i + 2] * 255;
      if (atlas) sprite(i, x0, x1, y0, y1, left, top, s, cz, em, r, g, b, a, atlas, tileW, tileH);
      else disc(x0, x1, y0, y1, left, top, s, em, r, g, b, a);
    }
    ctx.putImageData(image, 0, 0);
  }

  // A disc of diameter s whose square's corner is (left, top): per row, the
  // span of pixel centres inside it (r2 <= 0.25 in the point's unit square,
  // as the shader tests); an emphasized point's outer ring is grey.
  function disc(x0, x1, y0, y1, left, top, s, em, r, g, b, a) {
    const colour = pack(r, g, b);
    const cx = left + s / 2;
    for (let py = y0; py <= y1; py++) {
      const cy = (py + 0.5 - top) / s - 0.5, w2 = 0.25 - cy * cy;
      if (w2 < 0) continue;
      const half = Math.sqrt(w2) * s, row = py * W;
      const from = Math.max(x0, Math.ceil(cx - half - 0.5)), to = Math.min(x1, Math.floor(cx + half - 0.5));
      if (!em && a === 1) {
        for (let p = row + from, end = row + to; p <= end; p++) pixels[p] = colour;
        continue;
      }
      for (let px = from; px <= to; px++) {
        const u = (px + 0.5 - left) / s - 0.5;
        if (em && u * u + cy * cy > 0.14) {
          if (a === 1) pixels[row + px] = RING;
          else put(row + px, DARK, DARK, DARK, a);
        } else if (a === 1) pixels[row + px] = colour;
        else put(row + px, r, g, b, a);
      }
    }
  }

  // Point i's sprite tile as a silhouette in its colour (texels darker than
  // 0.1 left out), nearest texel, depth-tested.
  function sprite(i, x0, x1, y0, y1, left, top, s, cz, em, r, g, b, a, atlas, tileW, tileH) {
    const tx = (i % atlas.cols) * tileW, ty = Math.floor(i / atlas.cols) * tileH;
    for (let py = y0; py <= y1; py++) {
      const v = (py + 0.5 - top) / s, row = py * W;
      const trow = (ty + Math.min(tileH - 1, Math.floor(v * tileH))) * atlas.width + tx;
      for (let px = x0; px <= x1; px++) {
        const u = (px + 0.5 - left) / s;
        const edge = em && Math.max(Math.abs(u - 0.5), Math.abs(v - 0.5)) > 0.44;
        const t = atlas.texels[trow + Math.min(tileW - 1, Math.floor(u * tileW))];
        const lum = Math.max(t & 255, (t >>> 8) & 255, (t >>> 16) & 255) / 255;
        if ((lum < 0.1 && !edge) || depth[row + px] <= cz) continue;
        depth[row + px] = cz;
        const k = 0.35 + 0.65 * lum;
        if (edge) put(row + px, DARK, DARK, DARK, a);
        else put(row + px, r * k, g * k, b * k, a);
      }
    }
  }

  // Blends a colour of opacity a over the pixel (a = 1: replaces it).
  function put(p, r, g, b, a) {
    if (a < 1) {
      const d = pixels[p];
      r = r * a + (d & 255) * (1 - a);
      g = g * a + ((d >>> 8) & 255) * (1 - a);
      b = b * a + ((d >>> 16) & 255) * (1 - a);
    }
    pixels[p] = pack(r, g, b);
  }

  // Waits until the frame is in the canvas (a one-pixel read, as WebGL's
  // readPixels waits for its rasterizer).
  function finish() {
    ctx.getImageData(0, 0, 1, 1);
  }

  // An atlas image's texels for draw().
  function texels(img) {
    const c = new OffscreenCanvas(img.width, img.height), g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    return new Uint32Array(g.getImageData(0, 0, img.width, img.height).data.buffer);
  }

  return { setSize, draw, finish, texels };
}
