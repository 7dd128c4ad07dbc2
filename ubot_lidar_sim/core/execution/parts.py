"""
A sweep computed in parts: contiguous beam ranges that give the bytes of the whole sweep.

Almost everything in a sweep is per beam, so a part (beams b0..b1) can be computed on its own.
Three things cross the part boundaries, and a part gets them from a *peer*:

- the running float sum of the foliage log transmissions (a cumulative sum in hit order),
  handed on as soon as the part has summed its own, before its contributions pass;
- the clutter streams: one Poisson array over every clutter cell of the sweep, and one
  exponential array over every drop (from a stream of its own); a part draws its share when
  the part before it is done with that stream;
- the noise stream: (n_echoes, 2) normals in beam order, drawn the same way.

Values only go forward, from part k - 1 to part k, so no part waits for a later one (a
wait that went back, part 0 for the last part's Poisson draws, and a minimum and maximum
gathered from every part cost A 4 ms of 48; docs/performance.md, session 7). With one
part (``Solo``) nothing is sent and each value starts from its initial state: that is the plain
sweep. ``worker.ScanProcess`` runs the parts in child processes and routes the values between
them. Floating-point sums are sequential and generators draw in order, so the parts reproduce the
whole sweep bit for bit.
"""


class Solo:
    """The peer of a sweep computed in one part: nothing crosses a boundary."""

    part, parts = 0, 1

    def receive(self, name):
        """Never called for one part (there is no part before it)."""
        raise RuntimeError(f'a single part has no peer to receive {name!r} from')

    def send(self, name, part, value):
        """Never called for one part (there is no part after it)."""
        raise RuntimeError(f'a single part has no peer to send {name!r} to')


SOLO = Solo()


def in_turn(peer, name, first, step):
    """
    Run value = step(value) once per part, in part order, and return this part's result.

    first() gives part 0's starting value (the others receive theirs from the part before);
    step returns (value to pass on, result). The last part's value goes nowhere.
    """
    value = first() if peer.part == 0 else peer.receive(name)
    value, result = step(value)
    if peer.part + 1 < peer.parts:
        peer.send(name, peer.part + 1, value)
    return result, value


def draw_in_turn(peer, name, rng, draw):
    """
    Return draw(generator) for this part's share of a stream that spans the whole sweep.

    Part 0 draws from rng; each later part from the generator the part before it left. Returns
    (values, generator after this part's draws).
    """
    def step(generator):
        values = draw(generator)
        return generator, values

    return in_turn(peer, name, lambda: rng, step)
