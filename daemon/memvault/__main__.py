from memvault.interfaces.daemon_run import main

main()
