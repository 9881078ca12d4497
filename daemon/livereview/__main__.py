from livereview.cli import main

raise SystemExit(main())
