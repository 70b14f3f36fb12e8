from cursorpilot.start import main

main()
