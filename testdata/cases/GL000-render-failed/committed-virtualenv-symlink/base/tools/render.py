print("render")
