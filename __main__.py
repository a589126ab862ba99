"""``python -m evoledger``: the ``evoledger`` command line, for when the console script is not on ``PATH``."""

from evoledger.kernel.cli import main

if __name__ == "__main__":
    main()
