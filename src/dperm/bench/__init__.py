"""Experiment runners behind `dperm demo` and `dperm bench`: the demo (demo.py), the
scaling study (scaling.py) and the reproduction of Table 3 of Zhang, Zheng, Mou, Wang
(IJCAI 2017) (table3.py). Each is imported only by the command that runs it."""
