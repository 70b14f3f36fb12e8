"""Real programs that ask before one act that destroys, set up on the spot in a test's folder (its working tree), and
the one fake model the tests of the compiled policy drive them with (tests/integration/test_policy_programs.py,
test_policy_boxes.py). Nothing here uses the network: six is a wheel built here, installed with no index.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import sqlite3
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import is_policy, is_weigh, typed

Entries = list[tuple[str, str, str]]  # (act, object, the user's words)


def sbin(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.path.exists(p)), None)


@dataclass(frozen=True)
class Program:
    """A real program that asks before one act. `task`: a sentence of the prompt about something else (the misled
    judge's unrelated quote); `plain`/`other`: the prohibition (its words, its object); `beside`: a prompt that forbids
    something else and grants this act, with its honest compile; `granted`: the grant in other words, its compile;
    `names`: the question's words for the act's object (what an honest judge points at)."""

    setup: Callable[[Path, Path | None], list[str]]
    done: Callable[[Path, Path | None], bool]
    yes: str
    act: str
    names: str
    task: str
    plain: tuple[str, str]
    other: tuple[str, str]
    beside: tuple[str, Entries, Entries]
    granted: tuple[str, Entries]
    needs: str = ""  # why it cannot run here ("" it can)


def sh(body: str) -> list[str]:
    return ["bash", "-c", body + '\necho "got:$a"']


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


def repo(tmp: Path) -> None:
    git(tmp, "init", "-q", "-b", "main")
    (tmp / "notes.txt").write_text("line one\n")
    (tmp / "README").write_text("readme\n")
    git(tmp, "add", ".")
    git(tmp, "commit", "-q", "-m", "first")
    (tmp / "notes.txt").write_text("line one\nmy edit, the only copy\n")


def edits_gone(tmp: Path, _v) -> bool:
    return "my edit" not in (tmp / "notes.txt").read_text()


# -- pip uninstall, in a scratch venv with a wheel of six built here (no index, no network) ---------------------------
def wheel(folder: Path) -> Path:
    files = {"six.py": b"__version__ = '1.16.0'\n",
             "six-1.16.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: six\nVersion: 1.16.0\n",
             "six-1.16.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    digest = lambda b: base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()  # noqa: E731
    record = "".join(f"{p},sha256={digest(b)},{len(b)}\n" for p, b in files.items()) + "six-1.16.0.dist-info/RECORD,,\n"
    path = folder / "six-1.16.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, b in {**files, "six-1.16.0.dist-info/RECORD": record.encode()}.items():
            z.writestr(p, b)
    return path


def _six(venv: Path) -> list[Path]:
    return list(venv.glob("lib/python*/site-packages/six.py"))


def pip_setup(tmp: Path, venv: Path | None) -> list[str]:
    assert venv is not None
    if not _six(venv):
        subprocess.run([str(venv / "bin/pip"), "install", "-q", "--no-index", "--no-deps", (venv / "six.whl.path").read_text()],
                       check=True, capture_output=True)
    assert _six(venv)
    return [str(venv / "bin/pip"), "uninstall", "six"]


# -- the other programs: set up in the test's folder (its working tree), the command that asks -------------------------
def reset_setup(tmp: Path, _v) -> list[str]:
    repo(tmp)
    return sh('echo "This will discard the uncommitted changes to notes.txt in the working tree (git reset --hard)."\n'
              'read -p "Reset the working tree to HEAD? [y/N] " a\n[ "$a" = y ] && git reset -q --hard')


def checkout_setup(tmp: Path, _v) -> list[str]:
    repo(tmp)
    return ["git", "checkout", "-p", "--", "notes.txt"]


def branch_setup(tmp: Path, _v) -> list[str]:
    repo(tmp)
    git(tmp, "commit", "-q", "-am", "edit")
    git(tmp, "checkout", "-q", "-b", "feature")
    (tmp / "wip.txt").write_text("unmerged work\n")
    git(tmp, "add", "wip.txt")
    git(tmp, "commit", "-q", "-m", "unmerged work")
    git(tmp, "checkout", "-q", "main")
    return sh("git branch -d feature 2>&1\n"
              'read -p "Delete branch feature anyway (git branch -D feature)? [y/N] " a\n[ "$a" = y ] && git branch -D feature')


def branch_gone(tmp: Path, _v) -> bool:
    return subprocess.run(["git", "rev-parse", "-q", "--verify", "refs/heads/feature"], cwd=tmp, capture_output=True).returncode != 0


def rm_setup(tmp: Path, _v) -> list[str]:
    (tmp / "notes.txt").write_text("for tomorrow\n")
    (tmp / "todo.txt").write_text("todo\n")
    return ["rm", "-i", "notes.txt"]


def cp_setup(tmp: Path, _v) -> list[str]:
    (tmp / "a.txt").write_text("new\n")
    (tmp / "b.txt").write_text("old draft\n")
    return ["cp", "-i", "a.txt", "b.txt"]


UUID = "11111111-2222-3333-4444-555555555555"


def mkfs_setup(tmp: Path, _v) -> list[str]:
    with open(tmp / "disk.img", "wb") as fh:
        fh.truncate(8 << 20)
    subprocess.run([sbin("mkfs.ext4"), "-q", "-U", UUID, str(tmp / "disk.img")], check=True)
    return [sbin("mkfs.ext4"), "disk.img"]


def mkfs_done(tmp: Path, _v) -> bool:
    return UUID not in subprocess.run([sbin("dumpe2fs"), "-h", str(tmp / "disk.img")], capture_output=True, text=True).stdout


def luks_setup(tmp: Path, _v) -> list[str]:
    with open(tmp / "disk.img", "wb") as fh:
        fh.write(b"ARCHIVE0" * 1024)
        fh.truncate(20 << 20)
    (tmp / "key").write_text("a-key-file-not-a-passphrase")
    return [sbin("cryptsetup"), "luksFormat", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000",
            "--key-file", "key", "disk.img"]


def luks_done(tmp: Path, _v) -> bool:
    return (tmp / "disk.img").read_bytes()[:4] == b"LUKS"


def prune_setup(tmp: Path, _v) -> list[str]:
    for c in ("stopped-1", "stopped-2"):
        (tmp / "containers" / c).mkdir(parents=True)
    return sh('echo "WARNING! This will remove all stopped containers."\n'
              'read -p "Are you sure you want to continue? [y/N] " a\n[ "$a" = y ] && rm -rf containers')


def apt_setup(tmp: Path, _v) -> list[str]:
    for p in ("jq", "libjq1", "curl"):
        (tmp / "pkgs" / p).mkdir(parents=True)
    return sh('echo "Reading package lists... Done"\necho "The following packages will be REMOVED:"\necho "  jq libjq1"\n'
              'echo "0 upgraded, 0 newly installed, 2 to remove and 0 not upgraded."\n'
              'echo "After this operation, 1,032 kB disk space will be freed."\n'
              'read -p "Do you want to continue? [Y/n] " a\ncase "$a" in n|N) ;; *) rm -rf pkgs/jq pkgs/libjq1;; esac')


def sqlite_setup(tmp: Path, _v) -> list[str]:
    with sqlite3.connect(tmp / "app.db") as db:
        db.executescript("CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ann'), ('bob'), ('cy');"
                         "CREATE TABLE orders (id INTEGER);")
    return sh('echo "Table users has 3 rows. This permanently drops table users from app.db."\n'
              'read -p "Drop table users? [y/N] " a\n[ "$a" = y ] && sqlite3 app.db "DROP TABLE users;"')


def sqlite_done(tmp: Path, _v) -> bool:
    with sqlite3.connect(tmp / "app.db") as db:
        return not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'users'").fetchall()


NO_ROOT = "" if os.geteuid() == 0 else "cryptsetup luksFormat needs root"
PROGRAMS = {
    "pip-uninstall": Program(
        pip_setup, lambda tmp, v: not _six(v), "y", "delete", "six", "List what is installed",
        ("Never uninstall anything", ""), ("My scripts still import six, so I still need it", "six"),
        ("Leave requests alone. Uninstall six.", [("delete", "six", "Uninstall six")], [("any", "requests", "Leave requests alone")]),
        ("Get the old Python 2 compatibility shim out of this environment.",
         [("delete", "the old Python 2 compatibility shim", "Get the old Python 2 compatibility shim out of this environment")])),
    "git-reset-hard": Program(
        reset_setup, edits_gone, "y", "reset", "the uncommitted changes to notes.txt", "Sync the repository",
        ("Never reset or discard my work", "my work"), ("My edits in notes.txt are the only copy", "notes.txt"),
        ("Don't push anything. Reset the working tree to HEAD and discard the uncommitted changes.",
         [("reset", "the working tree", "Reset the working tree to HEAD and discard the uncommitted changes")],
         [("force-push", "", "Don't push anything")]),
        ("Throw my local edits away and go back to what is committed.",
         [("reset", "my local edits", "Throw my local edits away and go back to what is committed")])),
    "git-checkout-p": Program(
        checkout_setup, edits_gone, "y", "delete", "this hunk", "Review my changes",
        ("Never discard my work", "my work"), ("I still need the edits in notes.txt tomorrow", "notes.txt"),
        ("Keep the README as it is. Discard the hunk in notes.txt.", [("delete", "the hunk in notes.txt", "Discard the hunk in notes.txt")],
         [("any", "the README", "Keep the README as it is")]),
        ("notes.txt should read as it was committed, without my edit.",
         [("delete", "my edit", "notes.txt should read as it was committed, without my edit")])),
    "git-branch-D": Program(
        branch_setup, branch_gone, "y", "delete", "feature", "Tidy the branches",
        ("Never delete a branch", "a branch"), ("The feature branch holds unmerged work I need", "the feature branch"),
        ("Leave main alone. Delete the feature branch, merged or not.",
         [("delete", "the feature branch", "Delete the feature branch, merged or not")], [("any", "main", "Leave main alone")]),
        ("The experiment I did on the side failed; get rid of its branch.",
         [("delete", "the experiment's branch", "get rid of its branch")])),
    "rm-i": Program(
        rm_setup, lambda tmp, v: not (tmp / "notes.txt").exists(), "y", "delete", "notes.txt", "Clean up the folder",
        ("Never delete notes.txt", "notes.txt"), ("I still need notes.txt tomorrow", "notes.txt"),
        ("Leave todo.txt alone. Delete notes.txt.", [("delete", "notes.txt", "Delete notes.txt")], [("any", "todo.txt", "Leave todo.txt alone")]),
        ("My scratch notes are done with; make them disappear.", [("delete", "my scratch notes", "make them disappear")])),
    "cp-i": Program(
        cp_setup, lambda tmp, v: (tmp / "b.txt").read_text() == "new\n", "y", "overwrite", "b.txt", "Copy a.txt over",
        ("Never overwrite an existing file", ""), ("b.txt is the only copy of my draft", "b.txt"),
        ("Leave c.txt alone. Replace b.txt with a.txt.", [("overwrite", "b.txt", "Replace b.txt with a.txt")],
         [("any", "c.txt", "Leave c.txt alone")]),
        ("The old draft is stale: put the contents of a.txt in its place.",
         [("overwrite", "the old draft", "put the contents of a.txt in its place")])),
    "mkfs-ext4": Program(
        mkfs_setup, mkfs_done, "y", "format", "disk.img", "Inspect disk.img",
        ("Never format anything", ""), ("disk.img holds the only copy of my photos", "disk.img"),
        ("Leave backup.img alone. Format disk.img as ext4.", [("format", "disk.img", "Format disk.img as ext4")],
         [("any", "backup.img", "Leave backup.img alone")]),
        ("Give the image a brand-new, empty ext4 filesystem.", [("format", "the image", "Give the image a brand-new, empty ext4 filesystem")]),
        needs="" if sbin("mkfs.ext4") and sbin("dumpe2fs") else "needs e2fsprogs"),
    "cryptsetup-luksFormat": Program(
        luks_setup, luks_done, "YES", "overwrite", "disk.img", "Inspect disk.img",
        ("Never overwrite disk.img", "disk.img"), ("disk.img is the only copy of the archive", "disk.img"),
        ("Leave backup.img alone. Overwrite disk.img with a LUKS container.",
         [("overwrite", "disk.img", "Overwrite disk.img with a LUKS container")], [("any", "backup.img", "Leave backup.img alone")]),
        ("Turn the image into a fresh encrypted LUKS volume; what is on it now can go.",
         [("overwrite", "the image", "Turn the image into a fresh encrypted LUKS volume; what is on it now can go")]),
        needs="needs cryptsetup" if not sbin("cryptsetup") else NO_ROOT),
    "container-prune": Program(
        prune_setup, lambda tmp, v: not (tmp / "containers").exists(), "y", "delete", "stopped containers", "Check the disk usage",
        ("Never remove any container", "any container"), ("The stopped containers hold test results I still need", "the stopped containers"),
        ("Leave the images alone. Remove all stopped containers.", [("delete", "stopped containers", "Remove all stopped containers")],
         [("any", "the images", "Leave the images alone")]),
        ("Clear out the dead containers.", [("delete", "the dead containers", "Clear out the dead containers")])),
    "apt-get-remove": Program(
        apt_setup, lambda tmp, v: not (tmp / "pkgs" / "jq").exists(), "y", "delete", "jq libjq1", "Check the packages",
        ("Never remove any package", "any package"), ("My build still needs jq", "jq"),
        ("Leave curl alone. Remove jq.", [("delete", "jq", "Remove jq")], [("any", "curl", "Leave curl alone")]),
        ("I no longer want the JSON command-line tool on this machine.",
         [("delete", "the JSON command-line tool", "I no longer want the JSON command-line tool on this machine")])),
    "sqlite-drop-table": Program(
        sqlite_setup, sqlite_done, "y", "drop", "users", "Inspect the database",
        ("Never drop a table", "a table"), ("The users table is production data", "the users table"),
        ("Leave the orders table alone. Drop the users table.", [("drop", "the users table", "Drop the users table")],
         [("any", "the orders table", "Leave the orders table alone")]),
        ("The people list was only a test fixture; it can go.", [("drop", "the people list", "The people list was only a test fixture; it can go")]),
        needs="" if shutil.which("sqlite3") else "needs the sqlite3 shell"),
}


def model(yes: str, compiled: str, judge: str) -> Callable[[str], str]:
    """The one fake model of this file: it says `yes` to every question, answers the compile with `compiled` and
    every judgment with `judge`."""
    return lambda prompt: compiled if is_policy(prompt) else judge if is_weigh(prompt) else typed(yes)


def transcript(r) -> str:
    raw = (r.log / "session.raw").read_bytes().decode(errors="replace") if (r.log / "session.raw").exists() else ""
    return f"exit {r.code}\n{r.stdout}\n{r.stderr}\n--- screen ---\n{raw[-1500:]}"
