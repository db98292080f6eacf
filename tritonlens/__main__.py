from tritonlens.cli import main

raise SystemExit(main())
