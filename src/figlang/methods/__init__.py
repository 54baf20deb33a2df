"""Methods: the Method interface and registry (:mod:`.base`), baselines, the prompted LM methods (:mod:`.prompted`) and figlang's trained models (:mod:`.trained`)."""
