"""src/train/numbers.cpp's number_to_words, written again in Python for the scripts that spell the
number task's answers without the C++ side (bench/bench_pytorch.py, tests/gpt_checkpoint_test.py).
No torch here: the checkpoint tests import it too."""

WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand").split()


def number_words(n):
    """2048 -> ['two', 'thousand', 'forty', 'eight']"""
    if n == 0:
        return ["zero"]
    w = []
    if n >= 1000:
        w += [WORDS[n // 1000], "thousand"]
    if n // 100 % 10:
        w += [WORDS[n // 100 % 10], "hundred"]
    r = n % 100
    if r >= 20:
        w += [WORDS[18 + r // 10]] + ([WORDS[r % 10]] if r % 10 else [])
    elif r:
        w += [WORDS[r]]
    return w
