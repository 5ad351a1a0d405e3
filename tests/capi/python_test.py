#!/usr/bin/python3
"""The Python binding (python/rig) end to end, on Debian's python3 with its
standard library: the cpu device with a generated model (RIG_TEST_MODEL),
and rig.bench on the sim device against its ground truth. The package is
found through PYTHONPATH and the library through RIG_LIBRARY
(tests/capi/CMakeLists.txt sets both)."""
import array
import os
import threading
import unittest

import rig

MODEL = os.environ["RIG_TEST_MODEL"]


def pattern(n, seed):
    return bytes(((i * 31 + seed * 17) ^ (seed << 3)) & 0xFF for i in range(n))


class Binding(unittest.TestCase):
    def setUp(self):
        self.device = rig.Device("cpu")
        self.model = self.device.load(MODEL)

    def tearDown(self):
        self.model.free()
        self.device.close()

    def test_describes_inputs_and_outputs(self):
        self.assertGreaterEqual(rig.abi_version(), 1)
        (i,), (o,) = self.model.inputs, self.model.outputs
        self.assertEqual((i.name, i.dtype, i.shape, i.bytes), ("input", "uint8", (1, 4, 16, 16), 1024))
        self.assertEqual((o.dtype, o.shape, o.bytes), ("float32", (1, 1, 8, 8), 256))

    def test_the_scoring_loop_contract(self):
        n = self.model.inputs[0].bytes
        a, b = pattern(n, 1), pattern(n, 2)
        out_a = self.model.run([a])[0].tobytes()
        out_b = self.model.run([b])[0].tobytes()
        self.assertEqual(len(out_a), self.model.outputs[0].bytes)
        self.assertNotEqual(out_a, out_b, "different inputs gave identical outputs")
        self.assertEqual(out_a, self.model.run([a])[0].tobytes(), "the same input twice differs")
        with self.assertRaises(rig.Error) as caught:
            self.model.run([a[:-1]])
        self.assertEqual(caught.exception.status, 2)
        self.assertIn(str(n), caught.exception.message)
        self.assertIn(str(n - 1), caught.exception.message)

    def test_any_buffer_protocol_object(self):
        n = self.model.inputs[0].bytes
        a = pattern(n, 3)
        expected = self.model.run(a)[0].tobytes()
        for obj in (bytearray(a), memoryview(a), memoryview(bytearray(a)), array.array("B", a),
                    memoryview(a + b"xx")[:n]):
            self.assertEqual(self.model.run([obj])[0].tobytes(), expected, type(obj))
        self.assertEqual(self.model.run({"input": a})[0].tobytes(), expected)
        with self.assertRaises(rig.Error):
            self.model.run({"other": a})

    def test_numpy_when_present(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("numpy is not installed")
        x = numpy.frombuffer(pattern(1024, 4), dtype=numpy.uint8).reshape(1, 4, 16, 16)
        (out,) = self.model.run([x], as_numpy=True)
        self.assertEqual(out.shape, (1, 1, 8, 8))
        self.assertEqual(out.dtype, numpy.float32)
        self.assertEqual(out.tobytes(), self.model.run([x.tobytes()])[0].tobytes())

    def test_free_while_other_threads_run(self):
        # Issue 26, item 4: free() waits for the runs in flight; a run after
        # it raises Error (before, the interpreter crashed).
        model = self.device.load(MODEL)
        data = pattern(model.inputs[0].bytes, 3)
        started = threading.Barrier(5)
        errors, ran = [], threading.Event()

        def runner():
            started.wait()
            while True:
                try:
                    model.run([data])
                    ran.set()
                except rig.Error as e:
                    errors.append(str(e))
                    return

        threads = [threading.Thread(target=runner) for _ in range(4)]
        for t in threads:
            t.start()
        started.wait()
        ran.wait(60)  # runs are going on: free while they do
        model.free()
        for t in threads:
            t.join()
        self.assertEqual(len(errors), 4)
        self.assertTrue(all("freed" in e for e in errors), errors)
        model.free()  # twice is harmless

    def test_load_from_bytes_and_retire(self):
        with open(MODEL, "rb") as f:
            data = f.read()
        newer = self.device.load(data, name="from-bytes")
        self.assertEqual(newer.inputs[0].bytes, 1024)
        with self.assertRaises(rig.Error) as caught:
            self.model.run([pattern(1024, 1)])
        self.assertEqual(caught.exception.status, 2)
        self.assertIn("retired", caught.exception.message)
        newer.free()

    def test_a_failed_load_retires_the_model_and_says_why(self):
        # Issue 37, item 11: the device drops its model before loading, so
        # a failed load retires the earlier handle; its run says why (before,
        # "run: no model loaded").
        with self.assertRaises(rig.Error):
            self.device.load("/nonexistent.onnx")
        with self.assertRaises(rig.Error) as caught:
            self.model.run([pattern(1024, 1)])
        self.assertEqual(caught.exception.status, 2)
        self.assertIn("retired by a later load that failed", caught.exception.message)
        self.assertIn("/nonexistent.onnx", caught.exception.message)

    def test_errors_carry_status_and_text(self):
        with self.assertRaises(rig.Error) as caught:
            rig.Device("warp:9")
        self.assertEqual(caught.exception.status, 2)
        self.assertTrue(caught.exception.message)
        with self.assertRaises(rig.Error) as caught:
            self.device.load("/nonexistent/model.onnx")
        self.assertNotEqual(caught.exception.status, 0)


class Bench(unittest.TestCase):
    def test_the_sim_ground_truth_rate(self):
        # compute 2 ms, transfers negligible at 10 GB/s: 500 frames/s pipelined.
        r = rig.bench(MODEL, "sim:compute=2ms,bw=10GB/s,depth=4", duration_s=1, repeats=2,
                      latency_samples=20)
        self.assertEqual(r["tool"], "rig bench")
        self.assertEqual(r["settings"]["effective"]["repeats"], 2)
        self.assertEqual(r["settings"]["effective"]["duration_s"], 1)
        self.assertAlmostEqual(r["steady"]["rate_per_s"]["median"], 500.0, delta=5.0)
        self.assertAlmostEqual(r["latency"]["hardware_ms"]["median"], 2.0, delta=0.01)

    def test_unknown_settings_are_refused(self):
        with self.assertRaises(rig.Error) as caught:
            rig.bench(MODEL, "sim:compute=2ms", repeets=2)
        self.assertEqual(caught.exception.status, 2)
        self.assertIn("unknown setting 'repeets'", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
