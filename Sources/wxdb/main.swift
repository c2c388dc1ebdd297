print("wxdb")
