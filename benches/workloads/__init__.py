"""The workloads of `benches/compare.py` (issue 3), one module per framework.

- `catalog`: what each workload is, its unit and the issue's aim (no framework imports);
- `common`: the shared inputs (seeded numpy arrays) and the timing loop;
- `on_ferrotape`, `on_numpy`, `on_tensorflow`, `on_pytorch`, `on_jax`: each framework's version
  of the workloads, as step functions;
- `worker`: the subprocess that imports one framework and times its steps on request;
- `machine`, `report`: the machine description, the table, the JSON file and the chart.
"""
