"""Leases of open event streams (service/store/stream_leases.py) on a real Redis and
on the embedded store: a holder's cap, giving back, lapsing, renewing, the keys' lives."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import pytest
import redis

from service.config import Config
from service.store import GameStore, TooManyStreams, connect
from service.store.keys import address_streams_key, seat_streams_key
from service.store.stream_leases import Lease, StreamLeases, address_holder, seat_holder


@pytest.fixture(params=["redis", "embedded"])
def store_of(request: pytest.FixtureRequest) -> Iterator[GameStore]:
    if request.param == "redis":
        request.getfixturevalue("redis_client")  # emptied of the service's keys
        config = Config.from_env({"REDIS_URL": request.getfixturevalue("redis_url")})
    else:
        config = Config.from_env({})
    client = connect(config)
    try:
        yield GameStore(client, config=config)
    finally:
        client.close()


@pytest.fixture
def leases(store_of: GameStore) -> StreamLeases:
    return store_of.streams


def _address() -> str:
    """An address no other test uses (the embedded store is one per process)."""
    return f"192.0.2.{secrets.randbelow(250)}-{secrets.token_hex(4)}"


def _count(store: GameStore, key: str) -> int:
    return int(store.client.zcount(key, time.time() * 1000, "+inf"))


def test_a_holder_holds_up_to_its_cap_and_the_refusal_names_it(
    store_of: GameStore, leases: StreamLeases
) -> None:
    address = _address()
    held = [leases.take([address_holder(address, 3)], 30) for _ in range(3)]
    with pytest.raises(TooManyStreams) as refused:
        leases.take([address_holder(address, 3)], 30)
    assert (refused.value.holder, refused.value.cap) == ("address", 3)
    assert 0 < refused.value.retry_after <= 30  # when the first lease lapses at the latest
    assert _count(store_of, address_streams_key(address)) == 3
    # another address has places of its own
    leases.take([address_holder(_address(), 3)], 30)
    held[1].release()
    assert _count(store_of, address_streams_key(address)) == 2
    leases.take([address_holder(address, 3)], 30)  # the place given back is taken again
    held[1].release()  # again: nothing (it was given back already)
    assert _count(store_of, address_streams_key(address)) == 3


def test_a_seat_refusal_gives_the_address_lease_back(
    store_of: GameStore, leases: StreamLeases
) -> None:
    address, game = _address(), f"g{secrets.token_hex(8)}"
    both = [address_holder(address, 10), seat_holder(game, 1, 2)]
    first = leases.take(both, 30)
    leases.take(both, 30)
    with pytest.raises(TooManyStreams) as refused:
        leases.take(both, 30)
    assert (refused.value.holder, refused.value.cap) == ("seat", 2)
    assert _count(store_of, address_streams_key(address)) == 2  # the refused one's is gone
    assert _count(store_of, seat_streams_key(game, 1)) == 2
    leases.take([address_holder(address, 10), seat_holder(game, 0, 2)], 30)  # another seat
    first.release("seat")  # its seat lost: its address's place kept
    assert _count(store_of, seat_streams_key(game, 1)) == 1
    assert _count(store_of, address_streams_key(address)) == 3
    assert first.holders == [("address", address_streams_key(address))]
    leases.take(both, 30)


def test_leases_of_a_process_that_never_gives_them_back_lapse(
    store_of: GameStore, leases: StreamLeases
) -> None:
    address = _address()
    for _ in range(2):
        leases.take([address_holder(address, 2)], 0.5)  # and then the process dies
    with pytest.raises(TooManyStreams) as refused:
        leases.take([address_holder(address, 2)], 0.5)
    assert refused.value.retry_after <= 0.5
    time.sleep(0.6)
    leases.take([address_holder(address, 2)], 30)
    leases.take([address_holder(address, 2)], 30)
    # the key lives as long as its last lease, then it is gone
    key = address_streams_key(address)
    assert 25_000 < store_of.client.pttl(key) <= 30_000
    assert store_of.client.zcard(key) == 2  # the lapsed ones were dropped


def test_a_kept_lease_outlives_its_first_life_and_a_lapsed_one_counts_again(
    store_of: GameStore, leases: StreamLeases
) -> None:
    address = _address()
    key = address_streams_key(address)
    kept: Lease = leases.take([address_holder(address, 1)], 0.6)
    kept.keep()  # before half its life: nothing sent
    assert store_of.client.pttl(key) <= 600
    time.sleep(0.35)
    kept.keep()  # renewed: another 0.6 s from now
    time.sleep(0.4)  # past its first life
    with pytest.raises(TooManyStreams):
        leases.take([address_holder(address, 1)], 0.6)
    time.sleep(0.7)  # not kept: lapsed
    assert _count(store_of, key) == 0
    kept.keep()  # a late heartbeat: counted again, even over the cap
    assert _count(store_of, key) == 1
    with pytest.raises(TooManyStreams):
        leases.take([address_holder(address, 1)], 0.6)
    kept.release()
    assert not store_of.client.exists(key)
    leases.take([address_holder(address, 1)], 0.6)


def test_no_holder_no_round_trip(leases: StreamLeases) -> None:
    lease = leases.take([], 30)
    lease.keep()
    lease.release()
    assert lease.holders == []


def test_a_lease_redis_cannot_take_back_is_left_to_lapse(redis_client: redis.Redis) -> None:
    config = Config.from_env({"REDIS_URL": "redis://127.0.0.1:1/0", "REDIS_TIMEOUT_SECONDS": "0.2"})
    dead = GameStore(connect(config), config=config)
    lease = Lease(dead.streams, "l1", 30)
    lease.holders.append(("address", address_streams_key("192.0.2.1")))
    lease.release()  # logged, not raised: the server is closing a stream
    assert lease.holders == []


def test_a_renewal_renews_the_lease_on_every_holder(
    store_of: GameStore, leases: StreamLeases
) -> None:
    address, game = _address(), f"g{secrets.token_hex(8)}"
    lease = leases.take([address_holder(address, 5), seat_holder(game, 0, 5)], 1)
    keys = [address_streams_key(address), seat_streams_key(game, 0)]
    assert [key for _name, key in lease.holders] == keys
    assert all(store_of.client.pttl(key) <= 1000 for key in keys)
    leases.renew(keys, lease.id, 60)  # what a heartbeat past half its life sends
    assert all(50_000 < store_of.client.pttl(key) <= 60_000 for key in keys)
    assert [_count(store_of, key) for key in keys] == [1, 1]
