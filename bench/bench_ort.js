// bench_ort.js: the ONNX Runtime peer of bench/bench_encoder.cpp: the encoder rows, same names.
//
// usage: node bench/bench_ort.js --ort DIR --model FILE [--threads 1,2] [--reps 7]
//                                [--filter REGEX] [--check DIR] [--out FILE.json]
//
// --ort:    the directory holding node_modules/onnxruntime-node (bench/report.py installs the
//           pinned version of bench/ort/package-lock.json into BUILD_DIR/bench/ort)
// --model:  encoder.onnx from bench/export_onnx.py (article 000's encoder, PyTorch's weights)
// Sessions: CPU execution provider, all graph optimisations (ONNX Runtime's default), sequential
//           execution, interOpNumThreads 1, intraOpNumThreads t for each t in --threads.
// Timing:   two warm-up runs, then the median over --reps repetitions of a fixed number of runs
//           (the runs per repetition of bench_pytorch.py), process.hrtime.
// --check:  before anything is timed, run the ids of DIR/check_ids.bin and print the largest
//           |ONNX Runtime - PyTorch| over DIR/check_out.bin (the caller judges it).
// Prints one JSON object per line and writes the timing rows to --out.
"use strict";
const fs = require("fs");
const path = require("path");

// name -> [B, T, runs per repetition]; the names of bench_encoder.cpp and bench_pytorch.py
const WORKLOADS = { encoder_1x5: [1, 5, 10], encoder_1x128: [1, 128, 3], encoder_8x128: [8, 128, 1] };
const VOCAB = 30522;

function args() {
  const a = { threads: "1,2", reps: "7", filter: "", check: "", out: "" };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    if (!(key in a) && key !== "ort" && key !== "model") throw new Error(`unknown option ${argv[i]}`);
    if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
    a[key] = argv[i + 1];
  }
  if (!a.ort || !a.model) throw new Error("--ort DIR and --model FILE are required");
  return a;
}

// ids (B,T): fixed pseudo-random token ids (a 32-bit LCG)
function ids(ort, B, T) {
  const data = new BigInt64Array(B * T);
  let s = 1234;
  for (let i = 0; i < data.length; ++i) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = BigInt(s % VOCAB);
  }
  return new ort.Tensor("int64", data, [B, T]);
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// seconds per run: two warm-ups, then the median over reps of `runs` runs each
async function timed(fn, reps, runs) {
  await fn();
  await fn();
  const times = [];
  for (let r = 0; r < reps; ++r) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < runs; ++i) await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9 / runs);
  }
  return median(times);
}

// max |ONNX Runtime - PyTorch| on the export's check ids
async function check(ort, session, dir) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, "check.json"), "utf8"));
  const idsBuf = fs.readFileSync(path.join(dir, "check_ids.bin"));
  const refBuf = fs.readFileSync(path.join(dir, "check_out.bin"));
  const x = new BigInt64Array(idsBuf.buffer.slice(idsBuf.byteOffset, idsBuf.byteOffset + idsBuf.byteLength));
  const ref = new Float32Array(refBuf.buffer.slice(refBuf.byteOffset, refBuf.byteOffset + refBuf.byteLength));
  const out = await session.run({ ids: new ort.Tensor("int64", x, meta.ids_shape) });
  const y = out.hidden;
  if (y.dims.join(",") !== meta.out_shape.join(",") || y.data.length !== ref.length)
    throw new Error(`check: output shape [${y.dims}] but PyTorch's is [${meta.out_shape}]`);
  let diff = 0;
  for (let i = 0; i < ref.length; ++i) diff = Math.max(diff, Math.abs(y.data[i] - ref[i]));
  return { check: "onnxruntime vs pytorch", shape: meta.out_shape, max_abs_diff: diff, out_max_abs: meta.out_max_abs };
}

async function main() {
  const a = args();
  const ort = require(path.join(path.resolve(a.ort), "node_modules", "onnxruntime-node"));
  const version = ort.env.versions.node || ort.env.versions.common;
  const filter = new RegExp(a.filter);
  const rows = [];
  let checked = !a.check;
  for (const t of a.threads.split(",").map(Number)) {
    const session = await ort.InferenceSession.create(a.model, {
      executionProviders: ["cpu"],
      graphOptimizationLevel: "all",
      executionMode: "sequential",
      intraOpNumThreads: t,
      interOpNumThreads: 1,
    });
    if (!checked) {
      console.log(JSON.stringify({ ...(await check(ort, session, a.check)), onnxruntime: version }));
      checked = true;
    }
    for (const [name, [B, T, runs]] of Object.entries(WORKLOADS)) {
      if (!filter.test(`${name}/${t}`)) continue;
      const feeds = { ids: ids(ort, B, T) };
      const sec = await timed(() => session.run(feeds), Number(a.reps), runs);
      const r = { workload: name, threads: t, intra_op_threads: t, inter_op_threads: 1, ms: sec * 1e3, onnxruntime: version };
      rows.push(r);
      console.log(JSON.stringify(r));
    }
    await session.release();
  }
  if (a.out) fs.writeFileSync(a.out, JSON.stringify(rows, null, 1));
}

main().catch((e) => {
  console.error(`bench_ort: error: ${e.message.split("\n")[0]}`);
  process.exit(1);
});
