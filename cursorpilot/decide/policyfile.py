"""The compiled policy on disk: a pinned file a person wrote or corrected (`run --policy FILE`, `policy -o FILE`), and
the cache of compiles, one per governing prompt and model, shared by every run and a fleet's tasks on this machine.
Also the compile request's words (what a model is asked, from the governing prompt alone).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import yaml

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from cursorpilot.decide.compiled import Policy, from_file, from_model, lexical
from cursorpilot.errors import BadInput
from cursorpilot.providers.base import AnswerRequest, Provider, Reply
from cursorpilot.records import models as R

if TYPE_CHECKING:
    from cursorpilot.decide.prompt_files import PromptFiler
    from cursorpilot.records.transcript import Transcript

SYSTEM = """You compile a person's instructions to an autopilot into a policy of what it may destroy. Read only their
words below. List the grants (the destructive acts they ask for, explicitly or as a necessary part of what they ask)
and the prohibitions (what they forbid, in any words: "never uninstall", "I still need X", "X is the only copy",
"leave X alone", "keep everything else"). Acts: delete, overwrite, format, drop, reset, force-push, and for a
prohibition "any" (every act that destroys). Each entry: the act, the object in their words ("" where they name
nothing in particular), their exact words as "quote" (copied, never paraphrased), and "except": what it leaves out.
A sentence that forbids an act is never a grant of it. When unsure whether something is granted, leave it out.
Reply with one JSON object: {"grants": [...], "prohibitions": [...]}."""


def request(governing_prompt: str) -> tuple[str, str]:
    """(system, user) of the compile: the governing prompt, and nothing any program printed."""
    return SYSTEM, f"# The person's instructions\n{governing_prompt or '(none given)'}\n\nCompile them into the policy."


def parsed(raw: str | None) -> object:
    """A model's compile, as data: the JSON object in its reply (a fence or reasoning around it aside); None: none."""
    text = (raw or "").strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return json.loads(text[start:end + 1])
    except ValueError:
        return None


def load(path: Path) -> Policy:
    """A pinned policy file (YAML or JSON, `grants:` and `prohibitions:`), or BadInput with the line to fix."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise BadInput(f"--policy {path}: {exc}".splitlines()[0]) from exc
    if not isinstance(data, dict) or not {"grants", "prohibitions"} & set(data):
        raise BadInput(f"--policy {path}: not a policy (expected 'grants:' and 'prohibitions:' lists; `cursor-pilot policy -o FILE` writes one)")
    policy = from_file(data, f"your file {path}")
    if policy.dropped:
        raise BadInput(f"--policy {path}: {policy.dropped[0]}")
    return policy


def dump(policy: Policy, governing_prompt: str) -> str:
    """The policy as a file a person reads, corrects and pins."""
    head = "".join(f"# {line}\n" for line in [
        "The governing prompt compiled into what it grants and forbids (cursor-pilot policy).",
        f"Compiled by: {policy.source}. Correct it, then pin it: cursor-pilot run --policy THIS_FILE ...",
        "acts: delete, overwrite, format, drop, reset, force-push; 'any' (a prohibition of every act that destroys)",
        *(f"dropped: {d}" for d in policy.dropped),
        "prompt: " + " ".join(governing_prompt.split())[:200]])
    return head + yaml.safe_dump(policy.data(), sort_keys=False, allow_unicode=True, width=120)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cursor-pilot" / "policies"


def key(governing_prompt: str, compiler: str) -> str:
    return hashlib.sha256(f"{compiler}\0{governing_prompt}".encode()).hexdigest()[:32]


def cached(governing_prompt: str, compiler: str) -> Policy | None:
    """A compile of this prompt by this model, made before (by any run on this machine), checked again as it is read."""
    try:
        data = json.loads((_cache_dir() / f"{key(governing_prompt, compiler)}.json").read_text())
    except (OSError, ValueError):
        return None
    return from_model(governing_prompt, data, f"{compiler} (cached)") if isinstance(data, dict) else None


def keep(governing_prompt: str, compiler: str, data: object) -> None:
    """The model's compile, kept for the next run of the same prompt (never a failure of the run)."""
    if not isinstance(data, dict):
        return
    try:
        folder = _cache_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder / f".{key(governing_prompt, compiler)}.{os.getpid()}"
        tmp.write_text(json.dumps(data))
        tmp.replace(folder / f"{key(governing_prompt, compiler)}.json")
    except OSError:
        pass


def from_reply(governing_prompt: str, reply: Reply, compiler: str) -> Policy:
    """The model's compile, checked against the prompt (compiled.from_model) and cached; a compile that failed or is
    unreadable leaves the lexical reader's, said in its source."""
    data = parsed(reply.raw if reply.raw is not None else reply.text)
    if not isinstance(data, dict) or not {"grants", "prohibitions"} & set(data):
        why = reply.reason or ("no JSON object in the reply" if data is None else "the reply is not a policy")
        return replace(lexical(governing_prompt), source=f"lexical (the model's compile failed: {why})")
    keep(governing_prompt, compiler, data)
    return from_model(governing_prompt, data, reply.source)


def compiler_of(provider: Provider) -> str:
    return f"{provider.name}:{getattr(provider, 'model', '') or ''}"


def compile_now(governing_prompt: str, provider: Provider, redact: Callable[[str], str]) -> Policy:
    """The policy at once, for `cursor-pilot policy` and a dry run: the model asked here (blocking), where one is."""
    if not provider.needs_prompt:
        return lexical(governing_prompt)
    found = cached(governing_prompt, compiler_of(provider))
    if found is not None:
        return found
    system, user = request(redact(governing_prompt))
    reply = provider.answer(AnswerRequest(governing_prompt=governing_prompt, kind="policy", rule_id="", prompt_block="", screen="",
                                          history=(), system=system, user=user))
    return from_reply(governing_prompt, reply, compiler_of(provider))


class Compiling:
    """One run's policy: pinned, or compiled once when a yes first needs it (never before a rule's answer): read from
    the cache of an earlier compile of the same prompt by the same model, by the lexical reader where no model is
    asked, else by the model (a request the channel makes where it may wait, like any model call)."""

    def __init__(self, governing_prompt: str, pinned: Policy | None):
        self.governing_prompt, self.policy = governing_prompt, pinned

    def request(self, provider: Provider, redacted: str, filer: PromptFiler, tx: Transcript) -> AnswerRequest | None:
        if self.policy is not None:
            return None
        self.compiler = compiler_of(provider)
        found = lexical(self.governing_prompt) if not provider.needs_prompt else cached(self.governing_prompt, self.compiler)
        if found is not None:
            self._compiled(found, tx)
            return None
        system, user = filer.fill_text(*request(redacted), "policy")
        tx.write(R.ProviderRequest(provider=provider.name, kind="policy", rule_id="", prompt="(the governing prompt)",
                                   prompt_tokens_est=filer.last_tokens, prompt_file=filer.last_file))
        return AnswerRequest(governing_prompt=self.governing_prompt, kind="policy", rule_id="", prompt_block="", screen="",
                             history=(), system=system, user=user)

    def received(self, reply: Reply, tx: Transcript) -> None:
        self._compiled(from_reply(self.governing_prompt, reply, self.compiler), tx)

    def _compiled(self, policy: Policy, tx: Transcript) -> None:
        self.policy = policy
        tx.write(R.PolicyCompiled(source=policy.source, policy=policy.data(), dropped=list(policy.dropped), lines=policy.lines()))
