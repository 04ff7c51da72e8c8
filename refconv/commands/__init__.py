"""The ``refconv`` subcommands, one module each (:mod:`refconv.cli` builds the parser and
dispatches): ``list`` (:mod:`.listing`), ``check`` (:mod:`.check`, its hang and crash shrinking
:mod:`.shrink`), ``repro`` (:mod:`.replay`), ``merge`` (:mod:`.merge`), ``specs``
(:mod:`.specs`); what they share (the session of a parsed command line, the run record, the
report on stdout) is :mod:`.common`.  Every ``cmd_*`` takes the parsed namespace and returns the
exit status; a user's bad input is a :class:`refconv.errors.UsageError`."""
