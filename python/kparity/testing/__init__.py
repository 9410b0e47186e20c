"""Testing aids for implementations of kparity's ops: ``kparity.testing.impls`` (example
implementations and planted bugs) and the pytest plugin ``kparity.testing.pytest_plugin``
(``pytest --kparity-cases N --kparity-seed S``)."""
