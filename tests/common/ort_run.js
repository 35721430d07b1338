// SPDX-License-Identifier: Apache-2.0
// Runs an ONNX model with ONNX Runtime (npm onnxruntime-node, CPU) - the
// float reference of the tests.
//   node ort_run.js <model.onnx> <out_dir> <name>=<file>:<dtype>:<d0xd1x..> ...
// Inputs are raw little-endian files; every model output is written to
// <out_dir>/<output name with / replaced by _>.bin as float32 (or its own
// type) plus a line "<name> <dtype> <dims>" on stdout.
'use strict';
const fs = require('fs');
const path = require('path');
const npm = process.env.OPENBPU_NPM || path.join(__dirname, '..', '..', 'third_party', 'npm');
const ort = require(path.join(npm, 'node_modules', 'onnxruntime-node'));

const TYPES = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array,
  int64: BigInt64Array, float64: Float64Array,
};

async function main() {
  const [model, outDir, ...specs] = process.argv.slice(2);
  const feeds = {};
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    const name = spec.slice(0, eq);
    const [file, dtype, shape] = spec.slice(eq + 1).split(':');
    const dims = shape.split('x').map(Number);
    const buf = fs.readFileSync(file);
    const T = TYPES[dtype];
    const data = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    feeds[name] = new ort.Tensor(dtype, data, dims);
  }
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, graphOptimizationLevel: 'all' });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of session.outputNames) {
    const t = results[name];
    const d = t.data;
    fs.writeFileSync(path.join(outDir, name.replace(/[\/\\:]/g, '_') + '.bin'),
                     Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    console.log(name + ' ' + t.type + ' ' + t.dims.join('x'));
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });
