"""A model in-process, no server: `--provider local --model PATH.gguf` (or `hf:OWNER/REPO/FILE.gguf`), through
llama-cpp-python (`pip install 'cursor-pilot[local]'`).

Loading a GGUF takes a second or more and hundreds of MB; a run asks many questions and a fleet many runs. So the model
is loaded by the provider's resident (resident.py) once, and each run is served by a child it forks, which shares the
loaded model's pages and answers that run's questions (CURSORPILOT_RESIDENT=0: loaded here, in the background, from the
moment the provider is made). Between the questions of a run the model keeps what it evaluated: llama.cpp reuses the
longest prefix of the last prompt, so the stable system prompt (decide/context.py) is read once; the reply's `cached`
tokens say how many it reused.

The confidence a cascade needs (decide/cascade.py) comes from the logits themselves: a logits processor sees each step's
logits before the grammar constrains them, keeps the likeliest few, and the chosen tokens' margins are computed as for a
server's `logprobs` (confidence.py); llama-cpp-python's own logprobs would need `logits_all`, 2.5 GB of logits for a
4096-token context of this vocabulary.

A model from the Hugging Face hub (`hf:OWNER/REPO/FILE.gguf`) is downloaded once by huggingface_hub into its cache;
`#sha256=HEX` after a path or an hf: name pins the file: a file whose digest differs is refused (exit 2).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import ModuleType

from cursorpilot.errors import BadInput
from cursorpilot.providers.base import ProviderConfig
from cursorpilot.providers.confidence import margin
from cursorpilot.providers.llm import ChatProvider, Failure, SdkClient
from cursorpilot.providers.resident import remote
from cursorpilot.providers.schema import enums_for, lean, schema_for

N_CTX = 4096  # the prompt's budget is 3000 tokens (--context-tokens) and a reply at most 800
TOP = 20  # the likeliest tokens kept at each step, for the confidence (an answer the grammar allows is among them)
INSTALL = "pip install 'cursor-pilot[local]'"
_LOADED: dict[str, object] = {}  # model path -> its Llama, loaded once in this process (the resident's, before it forks)


class LocalProvider(ChatProvider):
    name = "local"
    key_env = ""
    forms = ("json_object", "text")  # json_object with the schema: a grammar llama.cpp holds the model to

    def __init__(self, config: ProviderConfig, api_key: str = "", **kw):
        path = str(config.model)
        super().__init__(Path(path).stem, config.retries, config.timeout, config.prices, **kw)
        self.path = path
        self.base_url = f"in-process {path}"
        self._remote = remote("llama_cpp", config, "", module="inprocess", warm_with=(path,))  # loaded once by the resident
        self._sdk = SdkClient(_import, eager=self._remote is None, make=lambda sdk: load(path, sdk))

    @property
    def client(self):
        return self._sdk.get()

    def _send(self, system: str, user: str, kind: str = "input", accepts: tuple[str, ...] = ()):
        llm = self.client
        _, schema = schema_for(kind, accepts)
        extra: dict[str, object] = {}
        if self.form == "json_object":
            extra["response_format"] = {"type": "json_object", "schema": lean(schema)}
        steps: list[tuple[int, list[tuple[int, float]]]] = []
        if self.sampling.logprobs:
            extra["logits_processor"] = [_Likeliest(steps)]
        if self.sampling.temperature:
            extra["seed"] = int.from_bytes(os.urandom(4), "little")  # a second answer that is not the first again
        before = [int(t) for t in llm.input_ids[: llm.n_tokens]]  # what the model holds from the last call: its prefix is reused
        resp = llm.create_chat_completion(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            temperature=self.sampling.temperature, max_tokens=800 if kind == "turn_end" else 300, **extra)
        text = resp["choices"][0]["message"]["content"] or ""
        usage = resp.get("usage") or {}
        tin, tout = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        cached = min(_common_prefix(before, [int(t) for t in llm.input_ids[: llm.n_tokens]]), tin)
        return text, (), tin, tout, cached, self._margin(llm, steps, text, enums_for(kind, accepts)) if self.sampling.logprobs else None

    @staticmethod
    def _margin(llm, steps: list[tuple[int, list[tuple[int, float]]]], text: str, enums: dict[str, tuple[str, ...]]) -> float | None:
        """The answer's margin from the steps' likeliest tokens: the token chosen at a step is the one the next step
        found appended (the last step's is the end of the reply, never part of the answer)."""
        import codecs

        tokens = []
        decoder = codecs.getincrementaldecoder("utf-8")("replace")  # "↗" split over two tokens is whole in the second
        for at, top in steps[:-1]:
            chosen = int(llm.input_ids[at])
            word = decoder.decode(llm.detokenize([chosen]))
            mine = next((lp for t, lp in top if t == chosen), None)
            if mine is None:
                mine = -30.0  # outside the likeliest few: a grammar forced it
            tokens.append((word, mine, [(word if t == chosen else llm.detokenize([t]).decode("utf-8", "replace"), lp) for t, lp in top]))
        return margin(tokens, text, enums)

    def _classify(self, exc: Exception) -> Failure | None:
        if isinstance(exc, (ValueError, RuntimeError)):  # a prompt longer than the context, a decode that failed
            return Failure(f"{type(exc).__name__}: {exc}", retryable=False)
        return None


class _Likeliest:
    """A logits processor that changes nothing and keeps, at each step, the TOP likeliest tokens' log-probabilities."""

    def __init__(self, steps: list):
        self.steps = steps

    def __call__(self, input_ids, scores):
        import numpy as np

        s = np.asarray(scores, dtype=np.float64)
        peak = s.max()
        norm = peak + np.log(np.exp(s - peak).sum())
        top = np.argpartition(-s, TOP)[:TOP]
        self.steps.append((len(input_ids), [(int(i), float(s[i] - norm)) for i in top]))
        return scores


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _import() -> ModuleType:
    try:
        import llama_cpp
    except ImportError:
        raise BadInput(f"--provider local needs llama-cpp-python: {INSTALL}") from None
    return llama_cpp


def load(path: str, sdk: ModuleType | None = None):
    """The model at `path`, loaded once in this process."""
    if path not in _LOADED:
        sdk = sdk or _import()
        _LOADED[path] = sdk.Llama(model_path=path, n_ctx=N_CTX, n_threads=max(os.cpu_count() or 1, 1), verbose=False)
    return _LOADED[path]


def warm(path: str) -> None:
    """The resident's: the model loaded before the first run is forked (resident.py)."""
    load(path)


def resolve(spec: str) -> str:
    """`PATH.gguf` or `hf:OWNER/REPO/FILE.gguf`, either with `#sha256=HEX`: the model file's path, checked."""
    spec, _, pin = spec.partition("#")
    if pin and not pin.startswith("sha256="):
        raise BadInput(f"--model {spec}#{pin}: pin the file with #sha256=HEX")
    want = pin.removeprefix("sha256=").lower()
    path = _from_hub(spec[3:]) if spec.startswith("hf:") else Path(spec).expanduser()
    if not path.is_file():
        raise BadInput(f"--model {spec}: no such model file (a GGUF path, or hf:OWNER/REPO/FILE.gguf)")
    if want and _sha256(path) != want:
        raise BadInput(f"--model {spec}: its sha256 is {_sha256(path)}, not the {want} pinned")
    return str(path.resolve())


def _from_hub(name: str) -> Path:
    """hf:OWNER/REPO/FILE.gguf, downloaded once into huggingface_hub's cache (a second run finds it there)."""
    owner, _, rest = name.partition("/")
    repo, _, filename = rest.partition("/")
    if not (owner and repo and filename):
        raise BadInput(f"--model hf:{name}: give hf:OWNER/REPO/FILE.gguf")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise BadInput(f"--model hf:... needs huggingface_hub: {INSTALL}") from None
    try:
        return Path(hf_hub_download(f"{owner}/{repo}", filename))
    except Exception as exc:  # the hub's errors (not found, no network, gated): one line
        raise BadInput(f"--model hf:{name}: {type(exc).__name__}: {exc}") from None


def _sha256(path: Path) -> str:
    """The file's digest, hashed once per size and mtime (a marker beside it in the user's cache keeps it)."""
    st = path.stat()
    key = hashlib.sha256(f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:16]
    mark = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cursor-pilot" / "sha256" / key
    if mark.is_file():
        return mark.read_text().strip()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_text(h.hexdigest())
    except OSError:
        pass
    return h.hexdigest()


def create(config: ProviderConfig) -> LocalProvider:
    from dataclasses import replace
    from importlib.util import find_spec

    if not config.model:
        raise BadInput("--provider local needs --model PATH.gguf (or hf:OWNER/REPO/FILE.gguf)")
    if find_spec("llama_cpp") is None:
        raise BadInput(f"--provider local needs llama-cpp-python: {INSTALL}")

    return LocalProvider(replace(config, model=resolve(config.model)))
