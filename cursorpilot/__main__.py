from cursorpilot.startup.start import main

main()
