// SPDX-License-Identifier: Apache-2.0
// Runs an ONNX model with ONNX Runtime (npm onnxruntime-node, CPU) - the
// float reference of the tests.
//   node ort_run.js <model.onnx> <out_dir> <name>=<file>:<dtype>:<d0xd1x..> ...
// Inputs are raw little-endian files; every model output is written to
// <out_dir>/<output name with / replaced by _>.bin as float32 (or its own
// type) plus a line "<name> <dtype> <dims>" on stdout.
// Batch mode: <name>=@<list file>:<dtype>:<dims> runs one inference per line
// of the list (an input file per line; several @ inputs advance together)
// and writes <out_dir>/<line index>_<output>.bin.
'use strict';
const fs = require('fs');
const path = require('path');
const npm = process.env.OPENBPU_NPM || path.join(__dirname, '..', '..', 'third_party', 'npm');
const ort = require(path.join(npm, 'node_modules', 'onnxruntime-node'));

const TYPES = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array,
  int64: BigInt64Array, float64: Float64Array,
};

function tensor(file, dtype, dims) {
  const buf = fs.readFileSync(file);
  const T = TYPES[dtype];
  const data = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  return new ort.Tensor(dtype, data, dims);
}

async function main() {
  const [model, outDir, ...specs] = process.argv.slice(2);
  const inputs = [];
  let runs = 1;
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    const name = spec.slice(0, eq);
    const [file, dtype, shape] = spec.slice(eq + 1).split(':');
    const dims = shape.split('x').map(Number);
    let files = [file];
    if (file.startsWith('@')) {
      files = fs.readFileSync(file.slice(1), 'utf8').split('\n').filter((l) => l.length > 0);
      runs = files.length;
    }
    inputs.push({ name, files, dtype, dims, batch: file.startsWith('@') });
  }
  const batch = inputs.some((i) => i.batch);
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, graphOptimizationLevel: 'all' });
  fs.mkdirSync(outDir, { recursive: true });
  for (let r = 0; r < runs; ++r) {
    const feeds = {};
    for (const i of inputs) feeds[i.name] = tensor(i.batch ? i.files[r] : i.files[0], i.dtype, i.dims);
    const results = await session.run(feeds);
    for (const name of session.outputNames) {
      const t = results[name];
      const d = t.data;
      const base = (batch ? r + '_' : '') + name.replace(/[\/\\:]/g, '_') + '.bin';
      fs.writeFileSync(path.join(outDir, base), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
      if (r === 0) console.log(name + ' ' + t.type + ' ' + t.dims.join('x'));
    }
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
