"""The decision path, shared by every channel: deny policy, then rules, then a provider, then reply checks and the
loop breaker. It knows nothing about terminals or protocols: a channel turns what a program shows into a Question
and carries out the Decision (keystrokes on a PTY, an optionId over ACP)."""
