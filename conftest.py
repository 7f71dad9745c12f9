"""Root pytest hooks: report how many notebook cells nbval re-ran and compared."""


def pytest_terminal_summary(terminalreporter):
    cells = [
        r
        for key in ("passed", "failed")
        for r in terminalreporter.stats.get(key, [])
        if getattr(r, "when", "call") == "call" and ".ipynb::" in r.nodeid
    ]
    if cells:
        failed = sum(1 for r in cells if r.failed)
        notebooks = len({r.nodeid.split("::")[0] for r in cells})
        terminalreporter.write_line(
            f"nbval: {len(cells)} notebook cells re-run and compared in {notebooks} notebooks "
            f"({failed} failed)"
        )
