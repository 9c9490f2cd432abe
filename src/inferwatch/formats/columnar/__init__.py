"""The formats read straight into numpy columns, for the server's hot ways in.

A room of its own because it loads numpy: ``inferwatch.formats`` itself stays standard-library
only (the edge agent imports it), and only the server imports this door.
"""

from inferwatch.formats.columnar._prompb import Columns, WriteRequestReader

__all__ = ["Columns", "WriteRequestReader"]
