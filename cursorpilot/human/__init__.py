"""The last rung of the decision path: a person, reached wherever they are (docs/human.md).

When nothing else can answer, the run asks a human through every channel it has at once: the terminal (when someone
is there), the decision page the run serves itself (`--listen`, `--notify`), and a notice with the page's link sent
through Apprise. The first answer that passes the deny policy wins; a later one is told who answered.

`humans.py` is the rung the channels' loops call (one function, `Humans.ask`); `race.py` is one question's first-answer-
wins; `asked.py` is what is shown (pure); `tokens.py` signs the page's links; `terminal.py` reads the terminal;
`page.py` (aiohttp), `notify.py` (Apprise) and `qr.py` (segno) are the only importers of their libraries, each imported
only when a run asks for it.
"""
