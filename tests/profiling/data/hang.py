import time


def test_hangs():
    while True:
        time.sleep(0.05)
