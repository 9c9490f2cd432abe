"""The edge agent's import set: the agent and its codecs load no numpy, pydantic, starlette or httpx."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "pydantic", "starlette", "httpx")

# Everything the agent runs: its config, its loop, the codecs of every target (batch formats,
# remote-write, snappy), the text parser of its sources; each used once so lazy imports count.
SCRIPT = """
import json, sys
import inferwatch.edge as edge
import inferwatch.formats as formats
from inferwatch.model import Labels, Sample
s = [Sample(Labels({"__name__": "up", "job": "dev"}), 1.0, 1.0)]
formats.snappy_decompress(formats.snappy_compress(formats.encode_write_request(s)))
formats.encode_columns({}, [0], s)
formats.parse_text("up 1\\n", now=1.0)
edge.Agent, edge.load_agent_config
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def test_the_agent_loads_none_of_the_servers_dependencies() -> None:
    # rule: a fresh interpreter, so nothing another test imported counts
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120,
                         check=True)
    loaded = set(json.loads(out.stdout))
    assert "inferwatch" in loaded
    assert not loaded & set(HEAVY), f"the edge agent loads {sorted(loaded & set(HEAVY))}"
