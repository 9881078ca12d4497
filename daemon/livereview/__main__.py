from livereview.cli.commands import main

raise SystemExit(main())
