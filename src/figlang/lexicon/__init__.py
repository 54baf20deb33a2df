"""The idiom lexicon, its matcher, simile patterns, inflection and WordNet: what interpret, knowledge and the builders share."""
