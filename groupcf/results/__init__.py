"""The result family (:class:`~groupcf.results.base.ResultBase`) of every groupcf method."""
