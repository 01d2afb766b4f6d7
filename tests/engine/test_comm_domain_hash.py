"""CommDomain keeps its value hash: the expert all-to-all's cache (compute._dispatch_combine_s)
looks a domain up at every decode step it prices, and hashing its twenty fields each time cost
about a microsecond."""

from __future__ import annotations

import dataclasses
import pickle

from advisor.engine.model.collectives import CommDomain


def _domain(**kw: object) -> CommDomain:
    base: dict[str, object] = {
        "nodes": 4,
        "ranks_per_node": 8,
        "scaleup_bytes_per_s": 450e9,
        "net_bytes_per_s": 400e9,
        "nic_count": 8,
    }
    base.update(kw)
    return CommDomain(**base)  # type: ignore[arg-type]


def _field_hash(d: CommDomain) -> int:
    # the domain's value: the fields its __init__ takes (the kept hash and figures are
    # init=False fields outside equality, the hash and the pickled state)
    return hash(tuple(getattr(d, f.name) for f in dataclasses.fields(d) if f.init))


def test_hash_is_kept_per_domain_and_equal_for_equal_domains() -> None:
    d = _domain()
    first = hash(d)
    assert first == _field_hash(d)
    # a field changed behind the frozen dataclass's back: a kept hash does not see it
    object.__setattr__(d, "nodes", 5)
    assert hash(d) == first
    assert hash(d) != _field_hash(d)
    # equal domains hash equal; a replaced or unpickled copy hashes its own values
    a, b = _domain(), _domain()
    assert a == b and hash(a) == hash(b)
    c = dataclasses.replace(a, nic_count=4)
    assert c != a and hash(c) == _field_hash(c)
    assert {a: 1}[b] == 1
    restored = pickle.loads(pickle.dumps(a))  # noqa: S301 - our own object
    assert restored == a and hash(restored) == hash(a)
    # the kept hash is not pickled (the compiled class has no instance dict to look in): the
    # copy of a domain whose kept hash no longer matches its fields hashes its own values
    moved = pickle.loads(pickle.dumps(d))  # noqa: S301 - our own object
    assert moved.nodes == 5 and hash(moved) == _field_hash(moved) != first
