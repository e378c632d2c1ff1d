"""`Forgotten` tells whether an agent was deleted after a read began, bounded to the last deletions and erring
towards "maybe" for a read older than those it still tells apart."""

from memlet.forgotten import Forgotten


def test_a_deletion_counts_only_for_reads_begun_before_it() -> None:
    deleted = Forgotten()
    before = deleted.now()
    deleted.forget("agent-1")
    after = deleted.now()
    assert deleted.since("agent-1", before)
    assert not deleted.since("agent-1", after)
    assert not deleted.since("agent-2", before)


def test_a_read_older_than_the_deletions_it_tells_apart_is_answered_maybe() -> None:
    deleted = Forgotten(keep=2)
    oldest = deleted.now()
    deleted.forget("agent-1")
    middle = deleted.now()
    deleted.forget("agent-2")
    deleted.forget("agent-3")  # agent-1's deletion is let go
    assert deleted.since("agent-9", oldest)  # begun before a deletion it can no longer name: maybe
    assert not deleted.since("agent-9", middle)  # begun after it: only the deletions it still holds count
    assert deleted.since("agent-3", middle) and deleted.since("agent-2", middle)
