"""The learned offline extractor (issue 32): a span tagger trained on the labelled corpus in
``data/corpus`` finds each fact's object and its vocabulary class; a verifier keeps or drops each
candidate and decides its status (current, ended, negated, plan, past)."""
