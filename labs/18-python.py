"""18-python.py - lab 18's program: handle() calls three functions that
spin for fixed shares of its CPU time, by design parse 60%, render 30%,
log_line 10% (of every 20 ms of the thread's CPU time: time.thread_time,
so a busy machine does not move the shares).  Runs until killed."""
import time


def parse(end):
    while time.thread_time() < end:
        pass


def render(end):
    while time.thread_time() < end:
        pass


def log_line(end):
    while time.thread_time() < end:
        pass


def handle():
    t = time.thread_time()
    parse(t + 0.012)
    render(t + 0.018)
    log_line(t + 0.020)


def main():
    while True:
        handle()


main()
