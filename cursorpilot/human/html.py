"""The decision page's HTML, PURE: an Asked in, a page out. Everything shown is escaped here, once (`_e`).

No script, no external file: a page that works on any phone, behind a strict Content-Security-Policy. The options are
buttons, each its own form posting `answer=<label>`; free text is a second form posting `answer` too, a password field
when the answer is a secret. Both post to the page's own URL, the contract a script uses as well (`curl -d answer=…`).
"""

from __future__ import annotations

import html

from cursorpilot.human.asked import ACCEPTED, GONE, REFUSED, TAKEN, Asked

_STYLE = """
body{font:16px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#1b1f24;background:#fff}
h1{font-size:1.35rem;margin:.2rem 0 .6rem}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
.why{background:#fff4d6;border-left:4px solid #e0a800;padding:.5rem .8rem}
.where,.foot{color:#57606a;font-size:.9rem}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem;overflow-x:auto;white-space:pre;font-size:.85rem}
pre.screen{background:#0d1117;color:#e6edf3}
.options{display:flex;flex-wrap:wrap;gap:.5rem}.options form{margin:0}
button{font:inherit;padding:.55rem 1rem;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}
.options button{background:#fff;color:#1f6feb}
input[type=text],input[type=password],textarea{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #d0d7de;
border-radius:6px;margin:.3rem 0 .5rem}
.banner{padding:.6rem .8rem;border-radius:6px;margin:.8rem 0}.ok{background:#dafbe1}.bad{background:#ffebe9}.gone{background:#eaeef2}
#free{margin-bottom:1rem}details{margin:1rem 0}summary{cursor:pointer}
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _doc(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,'
            f'initial-scale=1"><meta name="referrer" content="no-referrer"><title>{_e(title)}</title><style>{_STYLE}</style>'
            f"</head><body>{body}</body></html>")


def question_page(a: Asked, *, expires: str = "", refused: str = "") -> str:
    """The question, the ways to answer it, and what the model would have read. refused: why the last answer was not
    taken (the deny policy, not an option), shown above the question, which stays open."""
    parts = [f"<h1>cursor-pilot needs you</h1><p class=\"where\">{_e(a.where())}</p>",
             f'<p class="why"><strong>Why a person:</strong> {_e(a.why)}</p>']
    if refused:
        parts.append(f'<p class="banner bad" id="refused"><strong>Not taken:</strong> {_e(refused)}. Answer again.</p>')
    parts.append(f'<h2>The question</h2><pre id="question">{_e(a.prompt)}</pre>')
    if a.action:
        parts.append(f'<h2>What a yes carries out</h2><pre id="action">{_e(a.action)}</pre>')
    parts.append(_forms(a))
    if expires:
        parts.append(f'<p class="where">{_e(expires)}</p>')
    if a.screen:
        parts.append(f'<h2>The screen</h2><pre class="screen" id="screen">{_e(chr(10).join(a.screen))}</pre>')
    if a.governing_prompt.strip():
        parts.append(f"<details><summary>The governing prompt</summary><pre>{_e(a.governing_prompt)}</pre></details>")
    parts.append('<p class="foot">This link works once, for this question only. A script answers with '
                 "<code>curl -d answer=TEXT</code> on this same URL (docs/human.md).</p>")
    return _doc(f"cursor-pilot: {a.headline()}", "".join(parts))


def _forms(a: Asked) -> str:
    out = ["<h2>Your answer</h2>"]
    if a.choices:
        buttons = "".join(f'<form method="post" action=""><button type="submit" name="answer" value="{_e(c)}">{_e(c)}</button></form>'
                          for c in a.choices)
        out.append(f'<div class="options" id="options">{buttons}</div><p>Or type it:</p>')
    hint = ("Type the answer. It is a secret: hidden here, masked in every record." if a.secret else
            "Type the answer: text, or keys as &lt;enter&gt;, &lt;down&gt;, &lt;esc&gt;…; empty is Enter.")
    if a.secret:
        field = '<input type="password" name="answer" id="answer" autocomplete="off">'
    elif a.multiline:
        field = '<textarea name="answer" id="answer" rows="4"></textarea>'
    else:
        field = '<input type="text" name="answer" id="answer" autocomplete="off" autofocus>'
    out.append(f'<form method="post" action="" id="free"><label for="answer">{hint}</label>{field}'
               '<button type="submit" id="send">Send</button></form>')
    return "".join(out)


_TITLES = {ACCEPTED: ("Thank you", "ok"), TAKEN: ("Already answered", "bad"), GONE: ("No longer open", "gone"),
           REFUSED: ("Not taken", "bad")}


def result_page(status: int, message: str, answer: str | None = None) -> str:
    """What became of an answer (or of a link that no longer asks anything)."""
    title, cls = _TITLES.get(status, ("Refused", "bad"))
    said = f"<p>Your answer: <code>{_e(answer)}</code></p>" if answer is not None else ""
    return _doc(f"cursor-pilot: {title}", f'<h1>{_e(title)}</h1><p class="banner {cls}" id="result">{_e(message)}</p>{said}')


def inbox_page(fleet: str, waiting: list[tuple[str, str, Asked]]) -> str:
    """A fleet's inbox (docs/fleet.md): every question waiting for a person across its runs, newest last, each with its
    task, why, its options and the link to its own page (where it is answered, as on a run's page)."""
    rows = []
    for task, link, a in waiting:
        options = f'<p class="where">options: {_e(" · ".join(a.choices))}</p>' if a.choices else ""
        rows.append(f'<li class="asked" data-task="{_e(task)}"><h2><a href="{_e(link)}">{_e(task)}: {_e(a.headline())}</a></h2>'
                    f'<p class="where">{_e(a.where())}</p><p class="why">{_e(a.why)}</p>{options}</li>')
    body = "".join(rows) or '<p class="banner gone" id="empty">Nothing waits for you: no task of this fleet asks a question now.</p>'
    return _doc(f"cursor-pilot fleet {fleet}: {len(waiting)} waiting",
                f'<h1>Fleet {_e(fleet)}: {len(waiting)} question(s) waiting</h1><ul id="inbox" style="list-style:none;padding:0">{body}</ul>'
                '<p class="foot">Each link opens one question; answering it lets that task go on while the others run. '
                "Reload this page for new questions. Keep its link to yourself: it lists every open question's link.</p>")
