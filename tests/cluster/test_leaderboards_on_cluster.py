"""Leaderboards on a real 3-node Redis Cluster: a board's shards are spread over the
nodes (distinct hash tags, slots spaced evenly), and paging and ranks are as on a
single Redis: every player once, in order, and ranks that agree with a brute-force
sort, each read one pipeline whose commands redis-py sends each node in turn."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster
from redis.crc import key_slot

from harness.redis_cluster import start_cluster
from harness.redis_server import INSTALL_HINT, RedisServer, redis_server_binary
from service.config import Config
from service.hosting import leaderboards
from service.store import GameStore
from tests.hosting.test_leaderboards import BOARD, fill, order_key, walk

pytestmark = pytest.mark.skipif(redis_server_binary() is None, reason=INSTALL_HINT)


@pytest.fixture(scope="module")
def cluster() -> Iterator[list[RedisServer]]:
    with start_cluster(3) as servers:
        yield servers


@pytest.fixture
def on_cluster(cluster: list[RedisServer]) -> Iterator[tuple[GameStore, Config]]:
    config = Config.from_env({"REDIS_URL": cluster[0].url, "REDIS_CLUSTER": "true"})
    store = GameStore.from_config(config)
    client = store.client
    assert isinstance(client, RedisCluster)
    client.flushall(target_nodes=RedisCluster.PRIMARIES)
    yield store, config
    client.close()


def test_shards_spread_over_the_nodes(on_cluster: tuple[GameStore, Config]) -> None:
    store, _config = on_cluster
    client = store.client
    shard_keys = store.leaderboards.shard_keys(BOARD.name)
    assert len(shard_keys) == 16
    tags = {ratings[ratings.index("{") : ratings.index("}") + 1] for ratings, _ in shard_keys}
    assert len(tags) == 16  # a tag of its own for each shard
    for ratings, entries in shard_keys:  # a shard's two keys share its slot
        assert key_slot(ratings.encode()) == key_slot(entries.encode())
    nodes = Counter(
        client.nodes_manager.get_node_from_slot(key_slot(ratings.encode())).name
        for ratings, _entries in shard_keys
    )
    assert len(nodes) == 3 and min(nodes.values()) >= 5, nodes


def test_paging_and_ranks_on_a_cluster(on_cluster: tuple[GameStore, Config]) -> None:
    store, config = on_cluster
    ratings = fill(store, config, BOARD, 2000, seed=11, distinct=40)
    expected = sorted(ratings, key=lambda p: order_key(p, ratings))
    given = [entry for page in walk(store, BOARD, 64) for entry in page]
    assert [e.player_id for e in given] == expected
    assert [e.rank for e in given] == list(range(1, 2001))
    for player in random.Random(12).sample(expected, 40):
        place = leaderboards.around(store, BOARD, player, 3)
        at = expected.index(player)
        assert place.rank == at + 1 and place.total == 2000
        assert [e.player_id for e in place.entries] == expected[max(0, at - 3) : at + 4]
    # ratings changing between pages: nobody twice, everyone left unchanged once
    rnd = random.Random(13)
    moved: set[str] = set()

    def shuffle_some() -> None:
        for player in rnd.sample(expected, 30):
            ratings[player] = rnd.randrange(40) * 0.5 - 5
            leaderboards.post(store, config, BOARD, player, ratings[player], 9)
            moved.add(player)

    ids = [entry.player_id for page in walk(store, BOARD, 64, shuffle_some) for entry in page]
    assert len(ids) == len(set(ids)) and set(ids) >= set(ratings) - moved
