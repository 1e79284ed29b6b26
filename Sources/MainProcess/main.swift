// `sotto`: the daemon (`sotto daemon`) and the command-line client, one binary.
await SottoCommand.main()
