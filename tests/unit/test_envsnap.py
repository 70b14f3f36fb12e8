"""Whether a run's folder is in a git work tree, found without starting git (envsnap.in_a_work_tree)."""

from cursorpilot.envsnap import in_a_work_tree


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
