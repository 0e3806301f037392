"""A backend's stderr cut into bounded lines and let through at a bounded rate
(router/facade/stderr_lines.py): what is cut or dropped is counted, never silently lost."""

from router.facade.stderr_lines import CUT_MARK, Budget, Dropped, LineCutter


def fed(cutter: LineCutter, *chunks: bytes) -> list[bytes]:
    return [line for chunk in chunks for line in cutter.feed(chunk)]


def test_lines_pass_whole_with_their_endings_however_they_arrive():
    cutter = LineCutter(Dropped(), max_line=32)
    assert fed(cutter, b"one\ntw", b"o\r\nthree") == [b"one\n", b"two\r", b"\n"]
    assert list(cutter.flush()) == [b"three"]


def test_a_long_line_is_cut_at_its_last_space_and_the_rest_counted():
    dropped = Dropped()
    cutter = LineCutter(dropped, max_line=16)
    line = b"alpha beta gamma-delta-epsilon\n"
    assert fed(cutter, line, b"next\n") == [b"alpha beta" + CUT_MARK, b"next\n"]
    assert dropped.cut_lines == 1 and dropped.bytes == len(line) - len(b"alpha beta")


def test_a_run_without_a_newline_is_cut_once_and_skipped_to_its_end():
    dropped = Dropped()
    cutter = LineCutter(dropped, max_line=16)
    out = fed(cutter, b"x" * 40, b"y" * 40, b"z\nafter\n")
    # no space to cut at: nothing of the run is shown (half a token could be half a secret)
    assert out == [CUT_MARK, b"after\n"]
    assert dropped.cut_lines == 1 and dropped.bytes == 82


def test_the_budget_pays_a_burst_then_the_rate():
    budget = Budget(now=0.0, rate=100, burst=300)
    assert budget.pay(300, now=0.0)
    assert not budget.pay(1, now=0.0)
    assert budget.pay(100, now=1.0)  # a second refills the rate
    assert budget.pay(300, now=100.0)  # a long pause refills up to the burst, and no more
    assert not budget.pay(1, now=100.0)


def test_the_report_says_how_much_was_left_out_and_why():
    dropped = Dropped(lines=2, bytes=1234, cut_lines=1)
    report = dropped.report("git")
    assert report.startswith(
        "context-router: backend 'git' stderr: 2 lines dropped (written faster than 64 KiB/s)"
    )
    assert "1 line cut at 8 KiB; 1,234 bytes not shown" in report and report.endswith("\n")
