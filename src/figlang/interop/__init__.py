"""figlang's tasks and results in other tools' formats.

* :mod:`.lm_eval_export`: a task split as an lm-evaluation-harness 0.4.x task folder (YAML + JSON lines).
* :mod:`.lm_eval_samples`: lm-eval's ``--log_samples`` output read back as figlang predictions.
* :mod:`.hf_export`: every split of a task as Parquet with a dataset card, and back into records.

Nothing here is imported by the layers below (data, models, evaluation); the CLI's
``figlang export`` and ``figlang eval --format lm-eval`` reach it.
"""
