"""A paragraph with a bulleted list of links above a line prompt is read as the line prompt (issue 48): a scaffolder's
"Docs:" and its links are not a menu's options. Its list was read as a menu when its bullets are a menu's markers
(`→`, `›`: every row marked alike, where a highlight marks one) or when one of its rows is drawn in colour in a program
that reads keys: the answer was held to the links ("names none of the options") and the run ended at a person.
Real programs on real pseudo-terminals (Python's input() and questionary's text prompt), answered by a model (the real
openai SDK against the local fake) and by rules. The mirror (Inquirer, prompts, clack, questionary and dialog menus
still read as menus) is test_menus.py, test_screens_read_right.py and test_real_programs.py."""

from __future__ import annotations

import sys

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, question_of, script, typed

pytestmark = pytest.mark.timeout(120)

SCAFFOLDER = """
    import sys
    bullet, reader, paint = sys.argv[1], sys.argv[2], sys.argv[3] == "paint"
    CYAN, PLAIN = ("\\033[36m", "\\033[0m") if paint else ("", "")
    print("Welcome to create-thing 3.2!")
    print()
    print("Docs:")
    print(f"{CYAN}  {bullet} https://create-thing.dev/docs/getting-started{PLAIN}")
    print(f"  {bullet} https://create-thing.dev/docs/templates")
    print(f"  {bullet} https://github.com/create-thing/create-thing/discussions")
    if reader == "input":
        name = input("Project name: ")
    else:
        import questionary
        name = questionary.text("Project name:").ask()
    open("out.txt", "w").write(name + "\\n")
"""
CASES = {  # bullet, reader, paint
    "arrows-questionary": ("→", "questionary", "plain"),  # a marker on every row: a bulleted list
    "chevrons-questionary": ("›", "questionary", "plain"),  # ...which the select rule took for its options
    "painted-link-questionary": ("-", "questionary", "paint"),  # one row in colour, in a program that reads keys
    "arrows-input": ("→", "input", "plain"),
    "painted-link-input": ("-", "input", "paint"),
}


@pytest.mark.parametrize("answerer", ["model", "rules"])
@pytest.mark.parametrize("case", list(CASES))
def test_links_above_a_line_prompt_are_no_menu(pilot, tmp_path, case, answerer):
    command = [*script(tmp_path, "scaffold", SCAFFOLDER), *CASES[case]]
    if answerer == "rules":
        r = pilot(command, rules="- {id: name, match: 'Project name', reply: shop-api}\n")
    else:
        asked: list[str] = []

        def answer(prompt: str) -> str:
            asked.append(question_of(prompt))
            return typed("shop-api")
        with FakeLLM(answer=answer) as server:
            r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        assert len(asked) == 1 and "Project name" in asked[0], asked
        assert '"enum"' not in str(server.requests[0]["json"].get("response_format")), "the answer was held to the links"
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "shop-api\n"
    (answered,) = r.of("answer")
    assert answered["reply"] == "shop-api" and answered["kind"] == "input" and r.of("menu_choice") == []
