// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime (onnxruntime-node, float32, CPU) latency of one model for
// bench/compare/compare.py.
// usage: node ort_runner.js <onnxruntime-node dir> <model.onnx> <threads> <runs>
// prints one JSON line: {"min_ms":..., "median_ms":..., "cpu_ms":...}
'use strict';
const [ortDir, modelPath, threadsArg, runsArg] = process.argv.slice(2);
const ort = require(ortDir);

(async () => {
  const threads = parseInt(threadsArg, 10);
  const runs = parseInt(runsArg, 10);
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const name of session.inputNames) {
    // Every exported model has one NCHW float input of a fixed shape; read it
    // from the model's metadata when available, else assume 1x3x224x224.
    let dims = [1, 3, 224, 224];
    const meta = session.inputMetadata && session.inputMetadata.find
                     ? session.inputMetadata.find((m) => m.name === name) : null;
    if (meta && meta.shape && meta.shape.every((d) => typeof d === 'number')) dims = meta.shape;
    if (process.env.OPENBPU_COMPARE_SHAPE) dims = JSON.parse(process.env.OPENBPU_COMPARE_SHAPE);
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; ++i) data[i] = Math.sin(i * 0.001);
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  for (let i = 0; i < 3; ++i) await session.run(feeds);
  const times = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < runs; ++i) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({
    min_ms: times[0],
    median_ms: times[Math.floor(times.length / 2)],
    cpu_ms: (cpu.user + cpu.system) / 1000 / runs,
  }));
})().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
