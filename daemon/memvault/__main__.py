from memvault.interfaces.cli import main

main()
