"""Whether a run's folder is in a git work tree, found without starting git (envsnap.in_a_work_tree), and what a model is
told of it (git_snapshot)."""

import subprocess

from cursorpilot.envsnap import git_snapshot, head_commit, in_a_work_tree


def test_a_folder_below_a_dot_git_is_in_a_work_tree_and_one_with_none_above_it_is_not(tmp_path, monkeypatch):
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere" / "deep"
    (repo / "app" / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    elsewhere.mkdir(parents=True)
    assert in_a_work_tree(str(repo)) and in_a_work_tree(str(repo / "app" / "src"))
    assert not in_a_work_tree(str(elsewhere))
    (elsewhere / ".git").write_text("gitdir: /somewhere/else\n")  # a linked worktree or a submodule: .git is a file
    assert in_a_work_tree(str(elsewhere))


def test_git_told_where_its_repository_is_is_asked_wherever_the_run_is(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "repo.git"))
    assert in_a_work_tree(str(tmp_path))


def _git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def test_the_snapshot_a_model_is_shown_names_the_branch_the_changes_and_their_size(tmp_path, monkeypatch):
    """One `git status --branch` and one `git diff --shortstat`, side by side: the branch as `git branch
    --show-current` says it, before the first commit, after it, tracking an upstream, and detached."""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "trunk")
    (repo / "a.txt").write_text("one\n")
    assert git_snapshot(str(repo)).splitlines() == [
        "branch: trunk", "git status --porcelain:", "?? a.txt", "git diff --shortstat: no unstaged changes"]
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "one")
    assert git_snapshot(str(repo)).splitlines()[:3] == ["branch: trunk", "git status --porcelain:", "(clean)"]
    (repo / "a.txt").write_text("two\n")
    assert git_snapshot(str(repo)).splitlines()[2:] == [" M a.txt", "git diff --shortstat: 1 file changed, 1 insertion(+), 1 deletion(-)"]
    _git(tmp_path, "clone", "-q", str(repo), "copy")
    (tmp_path / "copy" / "b.txt").write_text("new\n")
    assert git_snapshot(str(tmp_path / "copy")).splitlines()[:3] == ["branch: trunk", "git status --porcelain:", "?? b.txt"]
    _git(repo, "checkout", "-q", "--detach")
    assert git_snapshot(str(repo)).startswith("branch: (detached)\n")


def test_no_snapshot_outside_a_work_tree_nor_inside_a_repository_folder(tmp_path, monkeypatch):
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    assert git_snapshot(str(tmp_path)) == ""
    _git(tmp_path, "init", "-q")
    assert git_snapshot(str(tmp_path / ".git")) == ""
    assert git_snapshot(str(tmp_path)).startswith("branch: ")


def test_heads_commit_is_read_from_the_repositorys_files_as_git_reads_it(tmp_path, monkeypatch):
    """Read with no git process before the program starts (the report's HEAD at the start): a loose ref, a packed one,
    a detached HEAD, a linked worktree's `.git` file, a folder below the top, and no commit yet."""
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    _git(repo, "init", "-q")
    assert head_commit(str(repo)) is None  # no commit yet
    (repo / "f").write_text("1")
    _git(repo, "add", "f")
    _git(repo, "commit", "-qm", "one")

    def rev(cwd) -> str:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()

    assert head_commit(str(repo)) == head_commit(str(repo / "sub")) == rev(repo)
    _git(repo, "pack-refs", "--all")
    assert not list((repo / ".git" / "refs" / "heads").iterdir()) and head_commit(str(repo)) == rev(repo)
    _git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "other")
    (tmp_path / "linked" / "f").write_text("2")
    _git(tmp_path / "linked", "commit", "-qam", "two")
    assert head_commit(str(tmp_path / "linked")) == rev(tmp_path / "linked") != rev(repo)
    _git(repo, "checkout", "-q", "--detach")
    assert head_commit(str(repo)) == rev(repo)
    assert head_commit(str(tmp_path)) is None  # not a work tree
