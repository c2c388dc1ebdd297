print("wxdb-replay")
