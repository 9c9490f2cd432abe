"""An HA pair's shared state: the alerting state in PostgreSQL, the sender's lease, the replicas;
and the fail-open journal both that and a lone server's state file write to when their store fails.

>>> from inferwatch.alerting.ha import translate
>>> translate("DELETE FROM acks WHERE group_key=?").sql
'DELETE FROM acks WHERE group_key=%s'
"""

from inferwatch.alerting.ha._devices import SharedDevices
from inferwatch.alerting.ha._failopen import FailOpenStateDB
from inferwatch.alerting.ha._lease import Lease, LeaseHolder
from inferwatch.alerting.ha._link import SharedLink
from inferwatch.alerting.ha._outcomes import SharedOutcomes
from inferwatch.alerting.ha._pg import PgStateDB, schema_version
from inferwatch.alerting.ha._replica import Peer, Replica, SoleReplica
from inferwatch.alerting.ha._schema import MIGRATIONS, translate
from inferwatch.alerting.ha._setup import (
    JOURNAL_FILE,
    Leadership,
    open_replica,
    shared_key,
    shared_state,
    shared_tables,
)

__all__ = ["JOURNAL_FILE", "MIGRATIONS", "FailOpenStateDB", "Leadership", "Lease", "LeaseHolder", "Peer",
           "PgStateDB", "Replica", "SharedDevices", "SharedLink", "SharedOutcomes", "SoleReplica",
           "open_replica", "schema_version", "shared_key", "shared_state", "shared_tables", "translate"]
