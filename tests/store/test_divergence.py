"""The shared point of two histories (service.store.divergence), scenario by scenario.

A history is written as a string of epochs, one letter per event (``"AAAB"``: three
events written by server epoch A, then one by B); each event's digest says which
history it belongs to."""

from __future__ import annotations

from service.store.divergence import continuous, shared_point
from service.store.history import Chain, link


def history(epochs: str, branch: str = "main", start: int = 0) -> list[str]:
    """Tags of a history: epoch letter n gives event n's epoch; ``branch`` its digests
    from event ``start + 1`` on (events up to ``start`` are those of "main")."""
    tags = []
    for n, letter in enumerate(epochs, 1):
        label = "main" if n <= start else branch
        digests, _head = link(Chain("00" * 16, ""), [f"{label}:{n}".encode()])
        tags.append(digests[0] + letter * 8)
    return tags


def test_the_same_history_is_continuous_at_every_point() -> None:
    tags = history("AAAABBB")
    for seq in range(len(tags) + 1):
        assert continuous(tags, seq, tags[seq - 1] if seq else "")
        assert shared_point(tags, seq, tags[seq - 1] if seq else "") == seq


def test_a_restart_with_all_its_data_keeps_every_id_valid() -> None:
    before = history("AAAAA")
    after = before + history("AAAAABB", "main")[5:]  # events written after the restart: B
    assert after[:5] == before
    assert continuous(after, 5, before[4])
    assert shared_point(after, 3, before[2]) == 3


def test_a_lost_tail_then_new_writes_share_the_last_event_of_the_old_epoch() -> None:
    client = history("AAAAAAAAAA")  # the client saw 10 events of epoch A
    server = history("AAAABBBBBBBB", "new", start=4)  # A's tail after 4 lost; B wrote on
    assert not continuous(server, 10, client[9])
    assert shared_point(server, 10, client[9]) == 4
    assert shared_point(server, 7, client[6]) == 4
    assert shared_point(server, 4, client[3]) == 4  # still there: continuous
    assert shared_point(server, 3, client[2]) == 3


def test_a_client_ahead_of_a_shorter_history_of_its_epoch() -> None:
    client = history("AAAAAAAA")
    server = client[:5]  # an older snapshot, no write since
    assert shared_point(server, 8, client[7]) == 5


def test_an_epoch_lost_entirely_shares_nothing_known() -> None:
    client = history("AAAACCCC")  # the client saw C's events 5..8
    server = history("AAAABB", "other", start=4)  # C's events all lost
    assert shared_point(server, 8, client[7]) == 0


def test_the_same_epoch_with_another_digest_vouches_for_nothing() -> None:
    # data restored into a running server: its later writes have the client's epoch
    client = history("AAAAAAAA")
    server = history("AAAAAAAAAA", "restored", start=5)
    assert not continuous(server, 8, client[7])
    assert shared_point(server, 8, client[7]) == 0
    assert shared_point(server, 4, client[3]) == 4  # before the divergence: continuous


def test_the_clients_epoch_after_its_seq_vouches_for_nothing() -> None:
    client = history("AAAAAB")
    server = history("AAAAAAAA", "restored", start=4)
    assert shared_point(server, 6, client[5]) == 0


def test_the_clients_epoch_in_two_runs_vouches_for_nothing() -> None:
    client = history("AAAAAAAAAA")
    server = history("AABBAA", "other", start=2)
    assert shared_point(server, 10, client[9]) == 0


def test_an_unknown_tag_at_seq_zero_is_still_the_start() -> None:
    assert shared_point(history("AA"), 0, "") == 0
    assert shared_point([], 5, history("A")[0]) == 0
