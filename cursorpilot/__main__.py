from cursorpilot.cli import main

main()
