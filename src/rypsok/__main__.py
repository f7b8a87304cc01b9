"""``python -m rypsok`` runs the command line."""

from rypsok.cli import main

raise SystemExit(main())
